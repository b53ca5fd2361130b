/**
 * For the console's quote test (apps/web/test/console-quote.test.ts), which runs from the web
 * package: the Derive simulator, and a MAX_FEE_SHARE_BPS between the fee shares of a small and a
 * large ETH put at its marks (balanced profile, the tests' 10 % platform fee), computed with the
 * API's own chain reader before the API starts.
 */
import { type RunningSimulator, startDeriveSimulator } from '@wh/derive-simulator'
import { quotePosition, tradingProfile } from '@wh/trading'
import { exchangeOptionChain } from '../src/routes/quotes/chain'

export async function simulatorWithThreshold(
  smallUsdc: bigint,
  largeUsdc: bigint,
): Promise<{ sim: RunningSimulator; threshold: number; small: number; large: number }> {
  const sim = await startDeriveSimulator({ chainId: 901 })
  const profile = tradingProfile('balanced')
  const chain = exchangeOptionChain({ httpUrl: sim.v3HttpUrl }, profile)
  const s = { profile, platformFeeRate: '0.1', maxFeeShareBps: 10_000, policy: 'warn' as const }
  const share = async (usdc: bigint) => {
    const q = await quotePosition(
      chain,
      { asset: 'ETH', side: 'put', amount: usdc * 1_000_000n },
      s,
      sim.control.nowMs(),
    )
    return Number(q.economics.feeShareBps)
  }
  const small = await share(smallUsdc)
  const large = await share(largeUsdc)
  return { sim, threshold: Math.floor((small + large) / 2), small, large }
}
