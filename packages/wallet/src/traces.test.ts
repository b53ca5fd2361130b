import { describe, expect, it } from 'vitest'
import { NATIVE_TRANSFER_LOG_INDEX } from './scan-parse'
import {
  INTERNAL_TRANSFER_LOG_INDEX_BASE,
  internalTransferLogIndex,
  internalTransfersInTransaction,
  isMethodUnavailable,
  type ParityTrace,
} from './traces'

const ME = '0x00000000000000000000000000000000000000aa'
const OTHER = '0x00000000000000000000000000000000000000bb'
const WALLET = '0x00000000000000000000000000000000000000cc'
const to = new Set([ME])

const call = (traceAddress: number[], p: Partial<ParityTrace['action']> & { error?: string }, callType = 'call') =>
  ({
    type: 'call',
    action: { callType, from: WALLET, to: ME, value: '0x0', ...p },
    traceAddress,
    blockNumber: 7,
    ...(p.error ? { error: p.error } : {}),
  }) as ParityTrace

describe('internal transfers in one transaction (Parity traces)', () => {
  it('takes each successful internal call with value into a watched address, indexed by its position', () => {
    const traces = [
      call([], { from: OTHER, to: WALLET, value: '0x0' }),
      call([0], { value: '0x64' }),
      call([1], { to: OTHER, value: '0x5' }),
      call([2], { value: '0xc8' }),
    ]
    expect(internalTransfersInTransaction(traces, to)).toEqual([
      { traceIndex: 1, from: WALLET, to: ME, valueWei: 100n },
      { traceIndex: 3, from: WALLET, to: ME, valueWei: 200n },
    ])
  })

  it('leaves out the top-level transfer: it is the scanner’s, credited under the top-level slot', () => {
    expect(internalTransfersInTransaction([call([], { from: OTHER, value: '0x64' })], to)).toEqual([])
  })

  it('leaves out calls that failed, and calls under a failed one (the transaction reverted included)', () => {
    const traces = [
      call([], { from: OTHER, to: WALLET }),
      call([0], { to: OTHER, error: 'Reverted' }),
      call([0, 0], { value: '0x64' }),
      call([1], { value: '0x1', error: 'out of gas' }),
      call([2], { value: '0x2' }),
    ]
    expect(internalTransfersInTransaction(traces, to).map((t) => t.traceIndex)).toEqual([4])
    const reverted = [call([], { from: OTHER, to: WALLET, error: 'Reverted' }), call([0], { value: '0x64' })]
    expect(internalTransfersInTransaction(reverted, to)).toEqual([])
  })

  it('moves value only by call: not delegatecall, staticcall or callcode; a selfdestruct pays its refund address', () => {
    const traces: ParityTrace[] = [
      call([], { from: OTHER, to: WALLET }),
      call([0], { value: '0x64' }, 'delegatecall'),
      call([1], { value: '0x64' }, 'staticcall'),
      call([2], { value: '0x64' }, 'callcode'),
      {
        type: 'suicide',
        action: { address: WALLET, refundAddress: ME, balance: '0x2a' },
        traceAddress: [3],
        blockNumber: 7,
      },
      call([4], { value: '0x0' }),
    ]
    expect(internalTransfersInTransaction(traces, to)).toEqual([{ traceIndex: 4, from: WALLET, to: ME, valueWei: 42n }])
  })

  it('matches recipients whatever their case', () => {
    const traces = [
      call([], { from: OTHER, to: WALLET }),
      call([0], { to: ME.toUpperCase().replace('0X', '0x'), value: '0x1' }),
    ]
    expect(internalTransfersInTransaction(traces, to)).toHaveLength(1)
  })
})

describe('the logIndex of an internal transfer', () => {
  it('is 2^32 + traceIndex: above every log index and the top-level slot, and a safe integer', () => {
    expect(INTERNAL_TRANSFER_LOG_INDEX_BASE).toBe(NATIVE_TRANSFER_LOG_INDEX + 1)
    expect(internalTransferLogIndex(0)).toBe(2 ** 32)
    expect(internalTransferLogIndex(3)).toBe(2 ** 32 + 3)
    expect(Number.isSafeInteger(internalTransferLogIndex(1_000_000))).toBe(true)
    expect(() => internalTransferLogIndex(-1)).toThrow(RangeError)
    expect(() => internalTransferLogIndex(1.5)).toThrow(RangeError)
    expect(() => internalTransferLogIndex(Number.MAX_SAFE_INTEGER)).toThrow(RangeError)
  })
})

describe('a node without a trace API', () => {
  it('is told apart from a transient failure', () => {
    expect(isMethodUnavailable({ code: -32601, message: 'Method not found' })).toBe(true)
    expect(
      isMethodUnavailable({
        message: 'x',
        cause: { details: 'the method trace_filter does not exist/is not available' },
      }),
    ).toBe(true)
    expect(isMethodUnavailable(new Error('fetch failed: ECONNREFUSED'))).toBe(false)
    expect(isMethodUnavailable({ code: -32000, message: 'header not found' })).toBe(false)
  })
})
