/**
 * The exchange cycle lock (spec 8.1 LOCK_TTL_MS): funding (`runFunding`), releases (`runReleases`), the
 * platform's fee collection (`runFeeCollection`), accruals (`runAccruals`) and reconciliation
 * (`runReconcile`) take it, as do the placing, wheel and conversion ticks and the treasury's refill, so
 * no two of them run at once across all worker replicas. Reconciliation in particular
 * must never compare balances while a funding or a release is between the exchange and the
 * journal. The holder extends it while it runs; one that dies leaves it to expire after LOCK_TTL_MS.
 */
import { LOCK_TTL_MS } from '@wh/config'
import { withLock } from '@wh/jobs'
import type { Redis } from 'ioredis'

export const EXCHANGE_CYCLE_LOCK = 'lock:exchange-cycle'
/**
 * How long an accounting tick (accruals, reconciliation: every 5 to 15 minutes) waits for the lock.
 * The fast ticks (every 5 to 10 s) hold it for a moment and step aside while one waits, so without
 * this wait an accounting run that met a fast one would skip its whole period.
 */
export const ACCOUNTING_LOCK_WAIT_MS = 60_000

/** Runs `fn` under the cycle lock; resolves `{ ran: false }` without running it when another holds it. */
export async function withCycleLock<T>(
  redis: Redis,
  fn: () => Promise<T>,
  key = EXCHANGE_CYCLE_LOCK,
  opts: { waitMs?: number } = {},
): Promise<{ ran: true; value: T } | { ran: false }> {
  let ran = false
  const value = await withLock(
    redis,
    key,
    LOCK_TTL_MS,
    async () => {
      ran = true
      return fn()
    },
    // the fast ticks step aside while an accounting run waits
    { ...opts, yieldToWaiters: true },
  )
  return ran ? { ran: true, value: value as T } : { ran: false }
}
