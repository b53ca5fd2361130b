/**
 * Cancelling a leg (docs/trading.md "Position states", "Cancelling a wheel's leg"): a leg not at the
 * exchange is cancelled at once (its reserved funding released), one placing is asked to cancel
 * its orders (the placing step does), a sold one is not cancelled (it is bought back, positions.ts
 * `closePosition`). Cancelling a wheel's live leg stops the wheel in the same transaction
 * (wheel-stop.ts). The rows are written by position-store.ts, the one writer of `positions`.
 */
import { NotFoundError } from '@wh/core'
import type { Sql } from '@wh/db'
import type { Queryable } from '@wh/ledger'
import { cancelReservedFunding } from '@wh/subaccounts'
import { cancelUnplaced, requestCancel } from './position-store'
import type { PositionState } from './position-types'
import { PositionFinishedError, PositionSoldError } from './positions'
import { announceStop, type StoppedWheel, settleStop } from './wheel-stop'

export type CancelOutcome =
  /** nothing was at the exchange: the position is cancelled now (a reserved funding is released) */
  | 'cancelled'
  /** orders rest at the exchange: the placing tick cancels them, then the position ends */
  | 'cancel_requested'

export interface CancelResult {
  outcome: CancelOutcome
  state: PositionState
  /** the leg was a wheel's live leg: the wheel stops with it (docs/trading.md "Cancelling a wheel's leg") */
  wheel?: { id: string; state: 'stopped' | 'stopping' }
}

/**
 * What a cancel found under the leg's row lock: the cancel done, a sold leg (it is bought back
 * instead, nothing written), or no leg of the caller's by that id (nothing written).
 */
export type CancelAttempt =
  | { kind: 'done'; result: CancelResult }
  | { kind: 'sold'; state: 'open' | 'closing' }
  | { kind: 'absent' }

/**
 * DELETE /positions/:id. Answers what happens; a second call while the first is pending repeats
 * the same outcome. A finished position throws PositionFinishedError (409); another user's or an
 * unknown one NotFoundError (404); a sold one PositionSoldError (409). Cancelling a wheel's live leg
 * stops the wheel in the same transaction (wheel-stop.ts): stopped at once when nothing of it
 * reached the exchange, else stopping until the runner sees no order rest; never running without a leg.
 */
export async function cancelPosition(
  sql: Sql,
  userId: string,
  positionId: string,
  now: Date = new Date(),
): Promise<CancelResult> {
  const a = await tryCancelPosition(sql, userId, positionId, now)
  if (a.kind === 'absent') throw new NotFoundError('position')
  if (a.kind === 'sold') throw new PositionSoldError(positionId, a.state)
  return a.result
}

/**
 * `cancelPosition`, answering a sold leg and an unknown id as values rather than errors, for a
 * caller that does something else then (endPosition: buy it back, or stop the wheel of that id).
 * A finished leg still throws PositionFinishedError (409): there is nothing else to do with it.
 */
export async function tryCancelPosition(
  sql: Sql,
  userId: string,
  positionId: string,
  now: Date,
): Promise<CancelAttempt> {
  const { attempt, stopped } = await sql.begin(async (tx) => {
    const r = await legCancel(tx, userId, positionId)
    if (r.kind !== 'done') return { attempt: r, stopped: undefined }
    const result: CancelResult = { outcome: r.outcome, state: r.state }
    const w = r.wheelId ? await wheelOfLeg(tx, r.wheelId, positionId) : undefined
    if (!w) return { attempt: { kind: 'done' as const, result }, stopped: undefined }
    const state = await settleStop(tx, w.wheelId, 'now', now, 'leg_cancelled')
    return {
      attempt: { kind: 'done' as const, result: { ...result, wheel: { id: w.wheelId, state } } },
      stopped: { w, state },
    }
  })
  if (stopped) await announceStop(sql, { ...stopped.w, positionId }, stopped.state, 'now', now, 'leg_cancelled')
  return attempt
}

/** The wheel whose live leg `positionId` is, while it is not stopped (locked for the stop). */
async function wheelOfLeg(tx: Queryable, wheelId: string, positionId: string): Promise<StoppedWheel | undefined> {
  const [w] = await tx<{ user_id: string; exchange_id: string | null }[]>`
    select w.user_id, s.exchange_id::text from wheels w join subaccounts s on s.id = w.subaccount_id
    where w.id = ${wheelId} and w.current_position_id = ${positionId} and w.state <> 'stopped'
    for update of w`
  return w ? { wheelId, userId: w.user_id, exchangeId: w.exchange_id } : undefined
}

/**
 * The leg's own part of a cancel, in the caller's transaction: a leg not at the exchange is
 * cancelled (its reserved funding released), one placing is asked to cancel its orders. The
 * wheel's stop (`stopWheel` with `now`) calls it and settles the wheel itself.
 */
export async function cancelLeg(
  tx: Queryable,
  userId: string,
  positionId: string,
): Promise<{ outcome: CancelOutcome; state: PositionState; wheelId: string | null }> {
  const r = await legCancel(tx, userId, positionId)
  if (r.kind === 'absent') throw new NotFoundError('position')
  if (r.kind === 'sold') throw new PositionSoldError(positionId, r.state)
  return { outcome: r.outcome, state: r.state, wheelId: r.wheelId }
}

type LegCancel =
  | { kind: 'done'; outcome: CancelOutcome; state: PositionState; wheelId: string | null }
  | { kind: 'sold'; state: 'open' | 'closing' }
  | { kind: 'absent' }

/** The leg locked and cancelled by its state; a sold or unknown leg answered, a finished one refused (409). */
async function legCancel(tx: Queryable, userId: string, positionId: string): Promise<LegCancel> {
  const [p] = await tx<{ state: PositionState; funding_transfer_id: string | null; wheel_id: string | null }[]>`
    select state, funding_transfer_id, wheel_id from positions where id = ${positionId} and user_id = ${userId} for update`
  if (!p) return { kind: 'absent' }
  switch (p.state) {
    case 'requested':
    case 'funding': {
      // a funding not yet sent is released; one already sent lands in the subaccount, unclaimed
      if (p.funding_transfer_id) await cancelReservedFunding(tx, p.funding_transfer_id)
      await cancelUnplaced(tx, positionId)
      return { kind: 'done', outcome: 'cancelled', state: 'cancelled', wheelId: p.wheel_id }
    }
    case 'placing':
      await requestCancel(tx, positionId)
      return { kind: 'done', outcome: 'cancel_requested', state: p.state, wheelId: p.wheel_id }
    case 'open':
    case 'closing':
      return { kind: 'sold', state: p.state }
    default:
      throw new PositionFinishedError(positionId, p.state)
  }
}
