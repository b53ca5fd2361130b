/**
 * The user's failures are the user's (docs/hostile-world.md "The user's failures are the user's"):
 * a withdrawal that fails on chain when it is mined (REVERTED) counts against its user, and after
 * WITHDRAWAL_FAILURES_BEFORE_COOLING of them within WITHDRAWAL_FAILURE_WINDOW_MS, the user's
 * withdrawals to addresses that hold code are refused (422 CONTRACT_DESTINATIONS_COOLING at the
 * request, failed with that code at the send) until the oldest of them leaves the window.
 *
 * Why only failures on chain and only contract destinations: a failure before signing costs
 * nothing but a dry run, and only an address with code can decide between the dry run and the
 * block to refuse a payment (an address without code gets exactly 21,000 gas and nothing can run
 * there). Together with the gas of a failed ETH withdrawal charged to its user (ledger
 * `withdrawal_gas_charged`), a loop of withdrawals that fail only when mined costs the platform
 * nothing, and one account at most two failed transactions a day.
 */
import type { Queryable } from '@wh/db'

/** Failures on chain a user may have in the window before contract destinations are refused. */
export const WITHDRAWAL_FAILURES_BEFORE_COOLING = 2
/** The window failures are counted over, and so the longest a cooling lasts. */
export const WITHDRAWAL_FAILURE_WINDOW_MS = 24 * 60 * 60_000

/**
 * The count of the user's REVERTED withdrawals in the window, as an SQL expression over the
 * enclosing query's `w.user_id` (claimForSend reads it with the row it locks: no extra round trip).
 */
export function recentFailuresOf(q: Queryable) {
  return q`(select count(*)::int from withdrawals f
    where f.user_id = w.user_id and f.last_error_code = 'REVERTED'
      and f.updated_at > now() - make_interval(secs => ${WITHDRAWAL_FAILURE_WINDOW_MS / 1000}))`
}

export interface Cooling {
  /** REVERTED withdrawals in the window */
  readonly failures: number
  /** when contract destinations are accepted again; undefined when they are now */
  readonly until: Date | undefined
}

/** Whether `userId`'s contract destinations are refused now, and until when (request.ts reads it first). */
export async function contractCooling(q: Queryable, userId: string): Promise<Cooling> {
  const [row] = await q<{ failures: number; until: Date | null }[]>`
    select count(*)::int as failures,
      min(updated_at) + make_interval(secs => ${WITHDRAWAL_FAILURE_WINDOW_MS / 1000}) as until
    from (
      select updated_at from withdrawals
      where user_id = ${userId} and last_error_code = 'REVERTED'
        and updated_at > now() - make_interval(secs => ${WITHDRAWAL_FAILURE_WINDOW_MS / 1000})
      order by updated_at desc limit ${WITHDRAWAL_FAILURES_BEFORE_COOLING}
    ) recent`
  const failures = row?.failures ?? 0
  return {
    failures,
    until: failures >= WITHDRAWAL_FAILURES_BEFORE_COOLING && row?.until ? row.until : undefined,
  }
}
