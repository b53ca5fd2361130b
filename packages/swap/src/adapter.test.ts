import { describe, expect, it } from 'vitest'
import { notConfiguredSwapAdapter } from './adapter'
import { SwapAdapterNotConfiguredError } from './errors'

describe('the not-configured swap adapter', () => {
  it('refuses every operation with SWAP_ADAPTER_NOT_CONFIGURED instead of pretending', async () => {
    const a = notConfiguredSwapAdapter('mainnet')
    const leg = { chain: 'base', sell: 'USDC', buy: 'ETH', amountIn: 1n } as const
    expect(() => a.token('base', 'USDC')).toThrow(SwapAdapterNotConfiguredError)
    await expect(a.quote(leg)).rejects.toMatchObject({ code: 'SWAP_ADAPTER_NOT_CONFIGURED' })
    await expect(
      a.buildSwap({ ...leg, minAmountOut: 1n, owner: '0x0', recipient: '0x0', deadlineSec: 0n }),
    ).rejects.toBeInstanceOf(SwapAdapterNotConfiguredError)
    expect(a.name).toBe('not-configured:mainnet')
  })
})
