/**
 * The platform stop (docs/solvency.md "The platform stop"), the one owner of `platform_stops`:
 * while a stop is open, new positions and withdrawals above PLATFORM_STOP_WITHDRAWAL_MAX_USD are
 * refused. A solvency deficit raises it (when PLATFORM_STOP_ON_DEFICIT is on); an operator may
 * raise one too. Only an operator clears it, and the clearing is recorded with who and why.
 */
import { AppError } from '@wh/core'
import type { Queryable, Sql } from '@wh/db'
import { recordOperatorAction } from './actions'

export type PlatformStopRaiser = 'solvency' | 'operator'

export interface PlatformStop {
  readonly id: string
  readonly raisedAt: Date
  readonly raisedBy: PlatformStopRaiser
  readonly reason: string
  readonly details: Record<string, unknown> | null
}

/** New positions and large withdrawals are refused while the platform is stopped. */
export class PlatformStoppedError extends AppError {
  constructor(stop: PlatformStop, what: string) {
    super({
      code: 'PLATFORM_STOPPED',
      statusCode: 503,
      retryable: true,
      message: `${what} is paused while an operator reviews the platform's balances`,
      details: { since: stop.raisedAt.toISOString() },
    })
  }
}

const UNIQUE_VIOLATION = '23505'

/** The open stops, oldest first (at most one per raiser); empty when the platform runs. */
export async function openPlatformStops(sql: Queryable): Promise<PlatformStop[]> {
  return sql<PlatformStop[]>`
    select id::text, raised_at as "raisedAt", raised_by as "raisedBy", reason, details from platform_stops
    where cleared_at is null order by raised_at, id`
}

/** The stop in force, if any (the oldest open one). */
export async function activePlatformStop(sql: Queryable): Promise<PlatformStop | undefined> {
  return (await openPlatformStops(sql))[0]
}

/** Throws PlatformStoppedError while a stop is open. */
export async function assertPlatformRunning(sql: Queryable, what: string): Promise<void> {
  const stop = await activePlatformStop(sql)
  if (stop) throw new PlatformStoppedError(stop, what)
}

/**
 * Raises the stop for `raisedBy` unless one of theirs is open already (idempotent: a second call
 * returns the open one with `raised: false`). An operator's raise is recorded in the operators' log.
 */
export async function raisePlatformStop(
  sql: Queryable,
  r: { raisedBy: PlatformStopRaiser; reason: string; details?: Record<string, unknown>; actor?: string },
): Promise<{ raised: boolean; stop: PlatformStop }> {
  const existing = (await openPlatformStops(sql)).find((s) => s.raisedBy === r.raisedBy)
  if (existing) return { raised: false, stop: existing }
  try {
    const [stop] = await sql<PlatformStop[]>`
      insert into platform_stops (raised_by, reason, details)
      values (${r.raisedBy}, ${r.reason.slice(0, 2000)}, ${r.details ? sql.json(r.details as never) : null})
      returning id::text, raised_at as "raisedAt", raised_by as "raisedBy", reason, details`
    if (r.raisedBy === 'operator')
      await recordOperatorAction(sql, {
        action: 'platform_stop_raised',
        subject: 'platform',
        actor: r.actor ?? 'unknown',
        reason: r.reason,
      })
    return { raised: true, stop: stop as PlatformStop }
  } catch (err) {
    // a concurrent raise by the same raiser won the partial unique index: answer its stop
    if ((err as { code?: string }).code !== UNIQUE_VIOLATION) throw err
    const won = (await openPlatformStops(sql)).find((s) => s.raisedBy === r.raisedBy)
    if (!won) throw err
    return { raised: false, stop: won }
  }
}

/**
 * An operator clears every open stop, with who and why (recorded in the operators' log), in the
 * caller's transaction: the stop is never lifted without its record. Returns how many it cleared: 0
 * when the platform was not stopped (a repeated command does nothing). Lifting the stop releases
 * money: the desk and the CLI run it as an approved proposal (proposals.ts).
 */
export async function clearPlatformStopIn(
  tx: Queryable,
  c: { reason: string; actor: string; details?: Record<string, unknown> },
): Promise<number> {
  const actor = c.actor.slice(0, 200)
  const cleared = await tx<{ id: string }[]>`
    update platform_stops set cleared_at = now(), cleared_by = ${actor}, clear_reason = ${c.reason.slice(0, 2000)}
    where cleared_at is null returning id::text`
  if (cleared.length > 0)
    await recordOperatorAction(tx, {
      action: 'platform_stop_cleared',
      subject: 'platform',
      actor,
      reason: c.reason,
      details: { stops: cleared.map((s) => s.id), ...c.details },
    })
  return cleared.length
}

/** clearPlatformStopIn in a transaction of its own. */
export async function clearPlatformStop(sql: Sql, c: { reason: string; actor: string }): Promise<number> {
  return sql.begin((tx) => clearPlatformStopIn(tx, c))
}
