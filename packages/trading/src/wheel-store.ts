/**
 * The wheels' rows (docs/trading.md "The wheel", "Wheel settings", "Conversions"): the one writer
 * of `wheels` (test/table-owners.test.ts). Each function is one transition of a wheel, named after
 * it, and one statement: the API's start, stop, resume and settings (wheel.ts), the runner's steps
 * (wheel/next-leg.ts) and the holding a conversion round leaves (its settling
 * transaction, conversions/run.ts). Those that take a `tx` are a step of the
 * caller's transaction.
 */
import type { Queryable } from '@wh/db'
import { type StoredWheelSettings, WHEEL_SETTING_COLUMNS } from './wheel-settings'
import type { StopMode } from './wheel-types'

// ── the user's (the API) ─────────────────────────────────────────────────────────────────────

/**
 * → running: a new wheel on the user's subaccount of `asset`, with its settings. Throws the unique
 * violation (23505) when a wheel of the user on the asset is not stopped.
 */
export async function insertWheel(
  sql: Queryable,
  req: { userId: string; asset: string },
  s: StoredWheelSettings,
): Promise<string> {
  const [w] = await sql<{ id: string }[]>`
      insert into wheels (user_id, asset, subaccount_id, state, strike_by, put_target_delta_bps,
        call_target_delta_bps, otm_bps, min_tenor_hours, max_tenor_days, at_expiry)
      select ${req.userId}, ${req.asset}, id, 'running', ${s.strike_by}, ${s.put_target_delta_bps},
        ${s.call_target_delta_bps}, ${s.otm_bps}, ${s.min_tenor_hours}, ${s.max_tenor_days}, ${s.at_expiry}
      from subaccounts where user_id = ${req.userId} and asset = ${req.asset}
      returning id`
  return (w as { id: string }).id
}

/** running: its first leg is requested (the first cycle). */
export async function setFirstLeg(sql: Queryable, wheelId: string, positionId: string): Promise<void> {
  await sql`update wheels set current_position_id = ${positionId}, cycles = 1, updated_at = now() where id = ${wheelId}`
}

/** A new wheel whose first leg was refused: removed, unless it got a leg meanwhile. */
export async function dropUnstarted(sql: Queryable, wheelId: string): Promise<void> {
  await sql`delete from wheels where id = ${wheelId} and current_position_id is null`
}

/** running | stopping → stopping, `mode` recorded (a stopped wheel stays stopped: false). */
export async function markStopping(sql: Queryable, wheelId: string, mode: StopMode): Promise<boolean> {
  const [marked] = await sql`update wheels set state = 'stopping', stop_mode = ${mode}, updated_at = now()
    where id = ${wheelId} and state <> 'stopped' returning id`
  return marked !== undefined
}

/**
 * running | stopping → stopped at once, when nothing of the wheel can be at the exchange: no leg is
 * live and none ever reached `placing` (no instrument chosen, so no order was ever sent). False
 * otherwise: the runner finishes such a stop once the exchange shows no order of its legs.
 */
export async function stopIdle(
  sql: Queryable,
  wheelId: string,
  mode: StopMode,
  at: Date,
  reason: string | null,
): Promise<boolean> {
  const [stopped] = await sql`update wheels set state = 'stopped', stop_mode = ${mode}, stopped_at = ${at},
      current_position_id = null, reason = ${reason}, updated_at = now()
      where id = ${wheelId} and state <> 'stopped'
        and not exists (select 1 from positions p where p.wheel_id = ${wheelId}
          and (p.state in ('requested', 'funding', 'placing', 'open', 'closing') or p.instrument is not null))
      returning id`
  return stopped !== undefined
}

/** stopped → running with no leg (the runner opens the next); false when it was not stopped. */
export async function resumeStopped(sql: Queryable, wheelId: string): Promise<boolean> {
  const [resumed] = await sql`update wheels set state = 'running', stop_mode = null, stopped_at = null,
      current_position_id = null, reason = null, last_attempt_at = null, updated_at = now()
      where id = ${wheelId} and state = 'stopped' returning id`
  return resumed !== undefined
}

/** The wheel's settings columns; under the row's lock (the caller's transaction). */
export async function saveWheelSettings(tx: Queryable, wheelId: string, next: StoredWheelSettings): Promise<void> {
  await tx`update wheels set ${tx(next, ...WHEEL_SETTING_COLUMNS)}, updated_at = now() where id = ${wheelId}`
}

// ── the runner's (the worker) ────────────────────────────────────────────────────────────────

/** A refused or skipped step: the reason shown, and the retry clock started at `at`. */
export async function noteSkipped(sql: Queryable, wheelId: string, reason: string, at: Date): Promise<void> {
  await sql`update wheels set reason = ${reason}, last_attempt_at = ${at}, updated_at = now() where id = ${wheelId}`
}

/** Waiting on another tick: the reason shown (written only when it changes), the retry clock not started. */
export async function noteWaiting(sql: Queryable, wheelId: string, reason: string): Promise<void> {
  await sql`update wheels set reason = ${reason}, updated_at = now() where id = ${wheelId} and reason is distinct from ${reason}`
}

/** running: its next leg is requested (one cycle more). */
export async function startNextLeg(sql: Queryable, wheelId: string, positionId: string, at: Date): Promise<void> {
  await sql`update wheels set current_position_id = ${positionId}, cycles = cycles + 1, reason = null,
      last_attempt_at = ${at}, updated_at = now() where id = ${wheelId} and state = 'running'`
}

/** running → stopped after its leg's expiry (at expiry: settle); false when it was not running. */
export async function stopAfterExpiry(sql: Queryable, wheelId: string, at: Date): Promise<boolean> {
  const [stopped] = await sql`update wheels set state = 'stopped', stop_mode = 'after_cycle', stopped_at = ${at},
      current_position_id = null, reason = 'stopped after the expiry (at expiry: settle)', updated_at = now()
      where id = ${wheelId} and state = 'running' returning id`
  return stopped !== undefined
}

/** stopping → stopped (no leg live, no order resting); false when it was not stopping. */
export async function markStopped(sql: Queryable, wheelId: string, at: Date): Promise<boolean> {
  const [stopped] = await sql`update wheels set state = 'stopped', stopped_at = ${at}, current_position_id = null,
    reason = null, updated_at = now() where id = ${wheelId} and state = 'stopping' returning id`
  return stopped !== undefined
}

// ── a conversion round's (in the transaction that ends it) ───────────────────────────────────

/** The wheel holds the underlying, bought at `costBasisE18` per unit (a round to the underlying). */
export async function holdUnderlying(tx: Queryable, wheelId: string, costBasisE18: bigint): Promise<void> {
  await tx`update wheels set holding = 'underlying', cost_basis_e18 = ${costBasisE18.toString()}, updated_at = now()
          where id = ${wheelId}`
}

/** The wheel holds cash, no cost basis (a round to cash). */
export async function holdCash(tx: Queryable, wheelId: string): Promise<void> {
  await tx`update wheels set holding = 'cash', cost_basis_e18 = null, updated_at = now() where id = ${wheelId}`
}
