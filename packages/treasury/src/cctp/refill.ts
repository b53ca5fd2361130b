/**
 * An L2's refill (the worker's ticks `cctp-refill-{chain}`, queue `treasury`, every 30 s; docs/chains.md
 * "Rebalancing"): under a Redis lock per chain, the open refill finished, or a new one when the L2 is short
 * (runCctpRefill). The sweeps run in each L2's bridge tick (bridge/bridge.ts).
 */
import { type L2ChainName, LOCK_TTL_MS } from '@wh/config'
import { withLock } from '@wh/jobs'
import type { ChainGuard } from '@wh/wallet'
import type { Redis } from 'ioredis'
import { type HotWalletDeps, type Log, summaryOf } from '../deps'
import { cctpRefillLockKey } from '../locks'
import { cctpDepsOf } from './plan'
import { runCctpRefill } from './route'

/** The refill tick's: the hot wallets, Redis (the lock) and which chains' RPCs are verified. */
export interface CctpRefillTickDeps extends HotWalletDeps {
  readonly redis: Redis
  readonly chainGuard: Pick<ChainGuard, 'ready'>
}

/** The tick's run for `chain`: `unverified` until its RPC is, `locked` when another process holds the route. */
export async function runCctpRefillTick(
  deps: CctpRefillTickDeps,
  chain: L2ChainName,
  log: Log,
): Promise<Record<string, unknown>> {
  if (!(await deps.chainGuard.ready(chain))) return { chain, status: 'unverified' }
  const result = await withLock(deps.redis, cctpRefillLockKey(chain), LOCK_TTL_MS, () =>
    runCctpRefill({ ...cctpDepsOf(deps), redis: deps.redis }, chain),
  )
  if (!result) return { chain, status: 'locked' }
  const summary = summaryOf(result)
  if (result.state !== 'idle') log.info({ chain, ...summary }, 'cctp refill tick')
  return { chain, ...summary }
}
