/**
 * The deployless balance read against a real anvil node: one eth_call reads a whole batch at a
 * past block, up to the largest batch a constructor may answer (EIP-170), and a balance its 16
 * bytes cannot hold fails the read instead of being cut.
 */
import { randomBytes } from 'node:crypto'
import { type RunningChain, rpcBatch, startChain } from '@wh/testkit'
import { type Address, createPublicClient, createTestClient, custom, getAddress, http, numberToHex } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BALANCE_READ_MAX_BATCH, readBalances } from '../src/index'

let chain: RunningChain
const calls: string[] = []
let client: ReturnType<typeof createPublicClient>

beforeAll(async () => {
  chain = await startChain()
  const inner = createPublicClient({ transport: http(chain.rpcUrl) })
  // counts what reaches the node
  client = createPublicClient({
    transport: custom({
      request: ({ method, params }: { method: string; params?: unknown }) => {
        calls.push(method)
        return inner.request({ method, params } as never)
      },
    }),
  })
})
afterAll(async () => {
  await chain?.stop()
})

const addresses = (n: number) =>
  Array.from({ length: n }, () => getAddress(`0x${randomBytes(20).toString('hex')}`) as Address)
const setBalances = (entries: Array<[Address, bigint]>) =>
  rpcBatch(
    chain.rpcUrl,
    entries.map(([a, wei]) => ({ method: 'anvil_setBalance', params: [a, numberToHex(wei)] })),
  )

describe('readBalances (contracts/BalanceReader.sol, deployless)', () => {
  it('reads the largest batch in one eth_call, each balance at the block asked', async () => {
    const all = addresses(BALANCE_READ_MAX_BATCH)
    const wei = all.map((_, i) => (i === 0 ? 0n : i === 1 ? 2n ** 128n - 1n : BigInt(i) * 10n ** 15n + 7n))
    await setBalances(all.map((a, i) => [a, wei[i] as bigint]))
    const anvil = createTestClient({ mode: 'anvil', transport: http(chain.rpcUrl) })
    await anvil.mine({ blocks: 1 })
    const block = await client.getBlockNumber({ cacheTime: 0 })
    // later changes are not at that block (anvil_setBalance edits the newest state: mine past it first)
    await anvil.mine({ blocks: 1 })
    await setBalances([[all[5] as Address, 1n]])
    await anvil.mine({ blocks: 1 })

    calls.length = 0
    expect(await readBalances(client, all, block, BALANCE_READ_MAX_BATCH)).toEqual(wei)
    expect(calls).toEqual(['eth_call'])
    // lowercase addresses read the same
    calls.length = 0
    expect(
      await readBalances(
        client,
        all.slice(0, 10).map((a) => a.toLowerCase()),
        block,
        4,
      ),
    ).toEqual(wei.slice(0, 10))
    expect(calls).toEqual(['eth_call', 'eth_call', 'eth_call'])
    expect((await readBalances(client, all.slice(5, 6), block + 2n))[0]).toBe(1n)
  })

  it('refuses a batch above what a constructor may return, and fails on a balance above 16 bytes', async () => {
    await expect(readBalances(client, addresses(2), 0n, BALANCE_READ_MAX_BATCH + 1)).rejects.toThrow(RangeError)
    const [huge] = addresses(1) as [Address]
    await setBalances([[huge, 2n ** 128n]])
    const block = await client.getBlockNumber({ cacheTime: 0 })
    await expect(readBalances(client, [huge], block)).rejects.toThrow()
    expect(await readBalances(client, [], block)).toEqual([])
  })
})
