/**
 * Stops (spec 6 and 6.1): a subaccount with `stopped_at` set must not
 * trade until the stop is cleared. Reconciliation raises stops (reconcile.ts); an operator clears
 * them (`clearStop`, run by apps/worker/src/cli/clear-stop.ts) after explaining the divergence.
 *
 * The trading issue imports `assertNotStopped` (or `isTradingStopped`) and calls it right before it
 * places an order, inside the transaction that records the order when it has one: the row is read
 * with FOR SHARE there, so a stop raised concurrently waits for that transaction or is seen by it.
 */
import { AppError, type Clock, NotFoundError } from '@wh/core'
import type { Sql } from '@wh/db'
import { append, minuteBucket, type Queryable } from '@wh/ledger'
import { clearSubaccountStop } from '@wh/subaccounts'
import { recordOperatorAction } from './actions'

/** Trading (or funding) refused: the subaccount is stopped until `stop_cleared`. */
export class SubaccountStoppedError extends AppError {
  constructor(subaccountRowId: string, stoppedAt: Date, reason: string | null) {
    super({
      code: 'SUBACCOUNT_STOPPED',
      statusCode: 409,
      message: 'the subaccount is stopped until an operator clears the stop',
      details: { subaccountRowId, stoppedAt: stoppedAt.toISOString(), reason },
    })
  }
}

/** Clearing refused: the stop was raised again in the minute it was already cleared in. */
export class StopClearTooSoonError extends AppError {
  constructor(subaccountRowId: string) {
    super({
      code: 'STOP_CLEAR_TOO_SOON',
      statusCode: 409,
      retryable: true,
      message: 'a stop_cleared already exists for this subaccount in this minute; clear again in the next minute',
      details: { subaccountRowId },
    })
  }
}

interface StopRow {
  id: string
  user_id: string
  exchange_id: string | null
  stopped_at: Date | null
  stop_reason: string | null
}

async function stopRow(sql: Queryable, subaccountRowId: string, lock: '' | 'share' | 'update'): Promise<StopRow> {
  const rows =
    lock === ''
      ? await sql<StopRow[]>`
          select id, user_id, exchange_id, stopped_at, stop_reason from subaccounts where id = ${subaccountRowId}`
      : lock === 'share'
        ? await sql<StopRow[]>`
            select id, user_id, exchange_id, stopped_at, stop_reason from subaccounts where id = ${subaccountRowId}
            for share`
        : await sql<StopRow[]>`
            select id, user_id, exchange_id, stopped_at, stop_reason from subaccounts where id = ${subaccountRowId}
            for update`
  const row = rows[0]
  if (!row) throw new NotFoundError('subaccount')
  return row
}

/**
 * True while the subaccount is stopped (a `stop_raised` without a later `stop_cleared`).
 * @example if (await isTradingStopped(sql, subaccount.id)) return 'skipped'
 */
export async function isTradingStopped(sql: Queryable, subaccountRowId: string): Promise<boolean> {
  return (await stopRow(sql, subaccountRowId, '')).stopped_at !== null
}

/**
 * Throws SubaccountStoppedError when the subaccount is stopped. Inside a transaction the row is
 * read FOR SHARE, so a concurrent stop waits for the caller's commit.
 * @example await deps.sql.begin(async (tx) => { await assertNotStopped(tx, sub.id); … place the order … })
 */
export async function assertNotStopped(sql: Queryable, subaccountRowId: string): Promise<void> {
  // outside a transaction the share lock ends with the statement: harmless
  const row = await stopRow(sql, subaccountRowId, 'share')
  if (row.stopped_at !== null) throw new SubaccountStoppedError(row.id, row.stopped_at, row.stop_reason)
}

export interface ClearStopResult {
  /** false: the subaccount was not stopped; nothing was recorded */
  readonly cleared: boolean
  readonly subaccountRowId: string
  /** the `stop_cleared` event */
  readonly eventId?: string
  readonly idempotencyKey?: string
}

/**
 * Clears a stop, in the caller's transaction: appends `stop_cleared` (key
 * `stop_cleared:{sub}:{minute bucket}`, built by the ledger from the payload: docs/ledger.md),
 * clears `stopped_at` and records the operator's decision (operator_actions). The operator gives
 * the reason (what explained the divergence). A subaccount that is not stopped is left alone.
 * Clearing a stop lets money move again: the desk and the CLI run it as an approved proposal.
 */
export async function clearStopIn(
  tx: Queryable,
  clock: Clock,
  p: { subaccountRowId: string; reason: string; actor: string; details?: Record<string, unknown> },
): Promise<ClearStopResult> {
  const reason = p.reason.trim()
  if (reason.length === 0 || reason.length > 500)
    throw new AppError({ code: 'INVALID_STOP_REASON', statusCode: 400, message: 'a reason of 1 to 500 characters' })
  const row = await stopRow(tx, p.subaccountRowId, 'update')
  if (row.stopped_at === null) return { cleared: false, subaccountRowId: row.id }
  if (row.exchange_id === null)
    throw new AppError({ code: 'NO_EXCHANGE_ID', message: 'a stopped subaccount without an exchange id' })
  const at = clock.now()
  const r = await append(tx, {
    type: 'stop_cleared',
    payload: { subaccountId: String(row.exchange_id), minuteBucket: minuteBucket(at), reason, userId: row.user_id },
    occurredAt: at,
  })
  // cleared, raised again and cleared again within one minute: the second stop_cleared would
  // deduplicate against the first and the journal would end on a raised stop
  if (r.duplicate) throw new StopClearTooSoonError(row.id)
  await clearSubaccountStop(tx, row.id)
  await recordOperatorAction(tx, {
    action: 'stop_cleared',
    subject: row.id,
    actor: p.actor,
    reason,
    details: {
      exchangeSubaccountId: String(row.exchange_id),
      stopReason: row.stop_reason,
      eventId: r.event.id,
      ...p.details,
    },
  })
  return { cleared: true, subaccountRowId: row.id, eventId: r.event.id, idempotencyKey: r.event.idempotencyKey }
}

/**
 * clearStopIn in a transaction of its own.
 *
 * @example
 *   await clearStop({ sql, clock: systemClock }, { subaccountRowId, reason: 'fee rebate, see ticket 42', actor })
 */
export async function clearStop(
  deps: { sql: Sql; clock: Clock },
  p: { subaccountRowId: string; reason: string; actor: string },
): Promise<ClearStopResult> {
  return deps.sql.begin((tx) => clearStopIn(tx, deps.clock, p))
}

export interface StoppedSubaccount {
  readonly id: string
  readonly userId: string
  readonly exchangeId: string | null
  readonly asset: string
  readonly stoppedAt: Date
  readonly stopReason: string | null
}

/** Subaccounts stopped by reconciliation, oldest stop first (at most 1,000). */
export async function listStoppedSubaccounts(sql: Queryable): Promise<StoppedSubaccount[]> {
  return sql<StoppedSubaccount[]>`
    select id, user_id as "userId", exchange_id::text as "exchangeId", asset, stopped_at as "stoppedAt",
      stop_reason as "stopReason"
    from subaccounts where stopped_at is not null order by stopped_at limit 1000`
}
