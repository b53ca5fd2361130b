/**
 * The network fee estimator (docs/chains.md "Network fee estimate") against a real anvil node: the
 * chain's max fee per gas as viem reads it, one read per chain for FEE_CACHE_MS, and no estimate
 * (not an error) for a node that cannot be reached or a chain it has no client for.
 */
import { type RunningChain, startChain } from '@wh/testkit'
import { createPublicClient, createTestClient, http } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type ChainInfo,
  ERC20_TRANSFER_GAS,
  FEE_CACHE_MS,
  gasLimitOf,
  NATIVE_TRANSFER_GAS,
  rpcFeeEstimator,
} from '../src/index'

const GWEI = 1_000_000_000n
let chain: RunningChain
let gone: RunningChain

const infoOf = (name: ChainInfo['name'], c: RunningChain): ChainInfo => ({
  name,
  chainId: c.chainId,
  rpcUrl: c.rpcUrl,
  confirmations: 1,
  finality: 'depth',
  tokens: [],
})

beforeAll(async () => {
  chain = await startChain({ baseFeePerGasWei: 7n * GWEI })
  // a node that was there and is not any more: its port refuses the connection
  gone = await startChain({ chainId: 31_338 })
  await gone.stop()
})
afterAll(async () => {
  await chain?.stop()
})

describe('rpcFeeEstimator', () => {
  it("answers the chain's max fee per gas and reads it once per chain while the cache holds", async () => {
    let nowMs = 1_000_000
    const fees = rpcFeeEstimator(new Map([['ethereum', infoOf('ethereum', chain)]]), () => nowMs)
    const direct = createPublicClient({ transport: http(chain.rpcUrl) })
    const expected = (await direct.estimateFeesPerGas()).maxFeePerGas
    expect(expected).toBeGreaterThan(7n * GWEI)
    expect(await fees.feePerGasWei('ethereum')).toBe(expected)

    // the base fee triples; within FEE_CACHE_MS the estimate is the one read, after it the new one
    const anvil = createTestClient({ mode: 'anvil', transport: http(chain.rpcUrl) })
    await anvil.setNextBlockBaseFeePerGas({ baseFeePerGas: 21n * GWEI })
    await anvil.mine({ blocks: 1 })
    const raised = (await direct.estimateFeesPerGas()).maxFeePerGas
    expect(raised).toBeGreaterThan(expected)
    nowMs += FEE_CACHE_MS - 1
    expect(await fees.feePerGasWei('ethereum')).toBe(expected)
    nowMs += 1
    expect(await fees.feePerGasWei('ethereum')).toBe(raised)
  })

  it('has no estimate for an unreachable node or a chain without a client, and does not throw', async () => {
    const fees = rpcFeeEstimator(new Map([['base', infoOf('base', gone)]]))
    expect(await fees.feePerGasWei('base')).toBeUndefined()
    expect(await fees.feePerGasWei('arbitrum')).toBeUndefined()
  })

  it('budgets 21,000 gas for ETH and 65,000 for a token transfer', () => {
    expect([gasLimitOf('ETH'), gasLimitOf('USDC')]).toEqual([NATIVE_TRANSFER_GAS, ERC20_TRANSFER_GAS])
    expect([NATIVE_TRANSFER_GAS, ERC20_TRANSFER_GAS]).toEqual([21_000n, 65_000n])
  })
})
