import { describe, expect, it } from 'vitest'
import {
  chunkRange,
  depositAddressLookup,
  halveRange,
  isLogsLimitError,
  NATIVE_TRANSFER_LOG_INDEX,
  nativeCandidates,
  parseTransferLog,
  type RpcBlock,
  type RpcLog,
  TRANSFER_TOPIC,
} from './scan-parse'

const A = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8'
const B = '0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc'
const pad = (a: string) => `0x000000000000000000000000${a.slice(2)}` as const
const log = (over: Partial<RpcLog> = {}): RpcLog => ({
  address: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
  topics: [TRANSFER_TOPIC, pad(A), pad(B)],
  data: `0x${25_500_000n.toString(16).padStart(64, '0')}`,
  blockNumber: '0x10',
  blockHash: `0x${'ab'.repeat(32)}`,
  transactionHash: `0x${'cd'.repeat(32)}`,
  transactionIndex: '0x2',
  logIndex: '0x7',
  ...over,
})

describe('parseTransferLog', () => {
  it('reads an ERC-20 Transfer: lowercase addresses, bigint amount, numeric positions', () => {
    expect(parseTransferLog(log())).toEqual({
      contract: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48',
      from: A,
      to: B,
      amountBaseUnits: 25_500_000n,
      blockNumber: 16n,
      blockHash: `0x${'ab'.repeat(32)}`,
      txHash: `0x${'cd'.repeat(32)}`,
      transactionIndex: 2,
      logIndex: 7,
    })
  })

  it('keeps amounts beyond 2^53 exact', () => {
    const big = 2n ** 200n + 1n
    expect(parseTransferLog(log({ data: `0x${big.toString(16).padStart(64, '0')}` }))?.amountBaseUnits).toBe(big)
  })

  it('ignores an ERC-721 Transfer, another event, malformed data and dirty address topics', () => {
    expect(parseTransferLog(log({ topics: [TRANSFER_TOPIC, pad(A), pad(B), pad(A)], data: '0x' }))).toBeUndefined()
    expect(parseTransferLog(log({ topics: [`0x${'11'.repeat(32)}`, pad(A), pad(B)] }))).toBeUndefined()
    expect(parseTransferLog(log({ data: '0x01' }))).toBeUndefined()
    expect(parseTransferLog(log({ topics: [TRANSFER_TOPIC, pad(A), `0xff${pad(B).slice(4)}`] }))).toBeUndefined()
  })
})

describe('block ranges', () => {
  it('chunks an inclusive range without gaps or overlaps', () => {
    expect(chunkRange({ from: 10n, to: 24n }, 5)).toEqual([
      { from: 10n, to: 14n },
      { from: 15n, to: 19n },
      { from: 20n, to: 24n },
    ])
    expect(chunkRange({ from: 10n, to: 11n }, 5)).toEqual([{ from: 10n, to: 11n }])
    expect(chunkRange({ from: 7n, to: 7n }, 1)).toEqual([{ from: 7n, to: 7n }])
    expect(() => chunkRange({ from: 0n, to: 1n }, 0)).toThrow(RangeError)
  })

  it('covers every block exactly once for any size', () => {
    for (const size of [1, 2, 3, 7, 100]) {
      const blocks = chunkRange({ from: 5n, to: 104n }, size).flatMap((c) => {
        const out: bigint[] = []
        for (let n = c.from; n <= c.to; n++) out.push(n)
        return out
      })
      expect(blocks).toHaveLength(100)
      expect(new Set(blocks).size).toBe(100)
    }
  })

  it('halves a range into two adjacent parts and refuses a single block', () => {
    expect(halveRange({ from: 0n, to: 9n })).toEqual([
      { from: 0n, to: 4n },
      { from: 5n, to: 9n },
    ])
    expect(halveRange({ from: 3n, to: 4n })).toEqual([
      { from: 3n, to: 3n },
      { from: 4n, to: 4n },
    ])
    expect(() => halveRange({ from: 3n, to: 3n })).toThrow(RangeError)
  })
})

describe('isLogsLimitError', () => {
  it("recognises providers' limit answers, also when wrapped", () => {
    expect(isLogsLimitError({ code: -32005, message: 'x' })).toBe(true)
    expect(isLogsLimitError(new Error('query returned more than 10000 results'))).toBe(true)
    expect(isLogsLimitError(new Error('eth_getLogs block range too large, range: 5000, max: 2000'))).toBe(true)
    expect(isLogsLimitError(new Error('outer', { cause: { details: 'Log response size exceeded.' } }))).toBe(true)
  })

  it('leaves other failures alone', () => {
    expect(isLogsLimitError(new Error('fetch failed'))).toBe(false)
    expect(isLogsLimitError({ code: -32601, message: 'method not found' })).toBe(false)
    expect(isLogsLimitError(undefined)).toBe(false)
  })
})

describe('nativeCandidates', () => {
  const tx = (to: string | null, value: string, from = A, i = 0) => ({
    hash: `0x${String(i).padStart(64, '0')}` as const,
    from: from as `0x${string}`,
    to: to as `0x${string}` | null,
    value: value as `0x${string}`,
    transactionIndex: `0x${i.toString(16)}` as const,
  })
  const lookup = depositAddressLookup([[B, 42]])
  const block = (transactions: RpcBlock['transactions']): RpcBlock => ({
    number: '0x1',
    hash: `0x${'ee'.repeat(32)}`,
    transactions,
  })

  it('keeps value transfers into deposit addresses at or above the minimum', () => {
    const got = nativeCandidates(
      block([
        tx(B.toUpperCase().replace('0X', '0x'), '0xde0b6b3a7640000', A, 0),
        tx(A, '0xde0b6b3a7640000', B, 1),
        tx(null, '0x0', A, 2),
        tx(B, '0x0', A, 3),
        tx(B, '0x5', A, 4),
      ]),
      lookup,
      6n,
      () => false,
    )
    expect(got).toEqual([
      { from: A, to: B, amountBaseUnits: 10n ** 18n, txHash: `0x${'0'.repeat(64)}`, transactionIndex: 0, hdIndex: 42 },
    ])
  })

  it('drops senders the caller ignores (the gas wallet) and refuses a block without full transactions', () => {
    expect(nativeCandidates(block([tx(B, '0x1')]), lookup, 1n, (a) => a === A)).toEqual([])
    expect(() => nativeCandidates(block([`0x${'00'.repeat(32)}`]), lookup, 1n, () => false)).toThrow(TypeError)
  })
})

describe('depositAddressLookup', () => {
  it('is case-insensitive and answers for 100,000 addresses', () => {
    const entries: [string, number][] = []
    for (let i = 0; i < 100_000; i++) entries.push([`0x${i.toString(16).padStart(40, 'a')}`.toUpperCase(), i])
    const lookup = depositAddressLookup(entries.map(([a, i]) => [a.replace('0X', '0x'), i]))
    expect(lookup(`0x${(99_999).toString(16).padStart(40, 'a')}`)).toBe(99_999)
    expect(lookup('0x0000000000000000000000000000000000000001')).toBeUndefined()
  })
})

describe('NATIVE_TRANSFER_LOG_INDEX', () => {
  it('is a non-negative integer clear of the service slots 0 and 1 and of any real log position', () => {
    expect(Number.isSafeInteger(NATIVE_TRANSFER_LOG_INDEX)).toBe(true)
    expect(NATIVE_TRANSFER_LOG_INDEX).toBe(2 ** 32 - 1)
    // a block would need this many logs at >= 375 gas each: far above any block gas limit
    expect(BigInt(NATIVE_TRANSFER_LOG_INDEX) * 375n > 10n ** 12n).toBe(true)
    expect(`tx:base:0xabc:${NATIVE_TRANSFER_LOG_INDEX}`).toMatch(/^tx:base:0xabc:\d+$/)
  })
})
