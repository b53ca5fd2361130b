/**
 * The L2 route's ticks (queue `treasury`; docs/chains.md "Rebalancing", "ETH on the L2s"):
 *
 * - `cctp-refill-{chain}` per L2, every CCTP_REFILL_EVERY_MS, under a Redis lock per chain: the open refill
 *   finished, or a new one when the L2 is short (runCctpRefill). The sweeps run in each L2's bridge tick.
 * - `hot-wallets-eth`, every HOT_WALLET_ETH_EVERY_MS: each chain's hot wallet ETH against HOT_WALLET_ETH_ALERT.
 *   ETH is not moved between chains: CCTP carries USDC only, and the canonical bridges take seven days back to
 *   L1; each chain keeps the ETH deposited on it (sweeps land there) and an operator tops a chain up when told.
 */
import { L2_CHAIN_NAMES, type L2ChainName, LOCK_TTL_MS } from '@wh/config'
import { withLock } from '@wh/jobs'
import { CHAIN_NAMES, hotWalletEth } from '@wh/wallet'
import { formatEther } from 'viem'
import type { TickContext, TickDefinition } from '../../ticks'
import { cctpDepsOf } from './plan'
import { runCctpRefill } from './route'

export const CCTP_REFILL_EVERY_MS = 30_000
export const HOT_WALLET_ETH_EVERY_MS = 5 * 60_000
export const cctpRefillTickName = (chain: L2ChainName) => `cctp-refill-${chain}`

async function refillTick(chain: L2ChainName, ctx: TickContext) {
  if (!(await ctx.deps.chainGuard.ready(chain))) return { chain, status: 'unverified' }
  const result = await withLock(ctx.deps.redis, `lock:${cctpRefillTickName(chain)}`, LOCK_TTL_MS, () =>
    runCctpRefill({ ...cctpDepsOf(ctx.deps), redis: ctx.deps.redis }, chain),
  )
  if (!result) return { chain, status: 'locked' }
  const summary = Object.fromEntries(
    Object.entries(result).map(([k, v]) => [k, typeof v === 'bigint' ? v.toString() : v]),
  )
  if (result.state !== 'idle') ctx.log.info({ chain, ...summary }, 'cctp refill tick')
  return { chain, ...summary }
}

/** Each chain whose hot wallet holds less ETH than HOT_WALLET_ETH_ALERT: one alert an hour per chain. */
export async function checkHotWalletEth(ctx: Pick<TickContext, 'deps'>): Promise<string[]> {
  const low: string[] = []
  for (const chain of CHAIN_NAMES) {
    if (!ctx.deps.clients.has(chain) || !(await ctx.deps.chainGuard.ready(chain).catch(() => false))) continue
    const eth = await hotWalletEth(ctx.deps, chain)
    if (eth >= ctx.deps.config.hotWalletEthAlertWei) continue
    low.push(chain)
    const claimed = await ctx.deps.redis.set(`alert:hot-eth:${chain}`, '1', 'PX', 3_600_000, 'NX')
    if (claimed === 'OK')
      await ctx.deps.alerter.alert('hot wallet ETH low: gas and ETH withdrawals on this chain will stop', {
        chain,
        eth: formatEther(eth),
        alertBelow: formatEther(ctx.deps.config.hotWalletEthAlertWei),
      })
  }
  return low
}

export const cctpRefillTicks: readonly TickDefinition[] = L2_CHAIN_NAMES.map((chain) => ({
  name: cctpRefillTickName(chain),
  queue: 'treasury',
  everyMs: CCTP_REFILL_EVERY_MS,
  process: (_job, ctx) => refillTick(chain, ctx),
}))

export const hotWalletEthTick: TickDefinition = {
  name: 'hot-wallets-eth',
  queue: 'treasury',
  everyMs: HOT_WALLET_ETH_EVERY_MS,
  process: async (_job, ctx) => ({ low: await checkHotWalletEth(ctx) }),
}
