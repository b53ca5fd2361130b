/**
 * The Redis hashes the worker writes and the API's GET /metrics reads (docs/architecture.md
 * "Operating it"), named in one place so the two processes agree. Each hash holds one field per
 * tick name or currency: bounded by the code's own ticks and the exchange's collateral currencies.
 */
import type { Redis } from 'ioredis'
import { BULL_PREFIX } from './queues'

/** field = tick (job) name, value = epoch ms of the job's last successful completion */
export const lastTickKey = (prefix: string = BULL_PREFIX) => `${prefix}:metrics:last_tick`
/** field = tick (job) name, value = how long that last successful run took, in ms */
export const lastTickDurationKey = (prefix: string = BULL_PREFIX) => `${prefix}:metrics:last_tick_duration_ms`
/**
 * field = currency, value = the largest |exchange − journal| of the latest reconciliation run, a
 * decimal string in the currency's own units; a currency with no divergence has no field
 */
export const reconcileDriftKey = (prefix: string = BULL_PREFIX) => `${prefix}:metrics:reconcile_drift`
/** field = chain, value = blocks between the chain's head and the last block the deposit watch scanned */
export const scanLagKey = (prefix: string = BULL_PREFIX) => `${prefix}:metrics:deposit_scan_lag_blocks`

/**
 * Records a successful job: its end time and duration, in one round trip.
 *
 * @example
 *   await recordTickSuccess(redis, 'wh', 'deposits-sweep', Date.now(), 120)
 */
export async function recordTickSuccess(
  redis: Redis,
  prefix: string,
  tick: string,
  atMs: number,
  durationMs: number,
): Promise<void> {
  await redis
    .multi()
    .hset(lastTickKey(prefix), tick, String(atMs))
    .hset(lastTickDurationKey(prefix), tick, String(Math.round(durationMs)))
    .exec()
}

/**
 * Replaces the drift hash with one run's figures (currency → |delta| as a decimal string), so a
 * divergence that is gone drops out; an empty map clears it.
 */
export async function recordReconcileDrift(
  redis: Redis,
  drift: ReadonlyMap<string, string>,
  prefix: string = BULL_PREFIX,
): Promise<void> {
  const key = reconcileDriftKey(prefix)
  const tx = redis.multi().del(key)
  if (drift.size > 0) tx.hset(key, Object.fromEntries(drift))
  await tx.exec()
}

/** Records how far a chain's deposit watch stands behind the chain's head after a scan. */
export async function recordScanLag(
  redis: Redis,
  chain: string,
  lagBlocks: bigint,
  prefix: string = BULL_PREFIX,
): Promise<void> {
  await redis.hset(scanLagKey(prefix), chain, (lagBlocks < 0n ? 0n : lagBlocks).toString())
}
