/**
 * The exchange cycle lock (spec 8.1 LOCK_TTL_MS): funding, releases, accruals and reconciliation
 * take it, so no two of them run at once across all worker replicas. Reconciliation in particular
 * must never compare balances while a funding or a release is between the exchange and the
 * journal. A holder that dies leaves the lock to expire after LOCK_TTL_MS.
 */
import { LOCK_TTL_MS } from '@wh/config'
import { withLock } from '@wh/jobs'
import type { Redis } from 'ioredis'

export const EXCHANGE_CYCLE_LOCK = 'lock:exchange-cycle'

/** Runs `fn` under the cycle lock; resolves `{ ran: false }` without running it when another holds it. */
export async function withCycleLock<T>(
  redis: Redis,
  fn: () => Promise<T>,
  key = EXCHANGE_CYCLE_LOCK,
): Promise<{ ran: true; value: T } | { ran: false }> {
  let ran = false
  const value = await withLock(redis, key, LOCK_TTL_MS, async () => {
    ran = true
    return fn()
  })
  return ran ? { ran: true, value: value as T } : { ran: false }
}
