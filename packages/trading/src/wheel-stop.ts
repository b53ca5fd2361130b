/**
 * How a wheel's stop settles (docs/trading.md "The wheel (runner)", "Cancelling a wheel's leg"),
 * shared by a stop (`stopWheel`) and the cancel of a wheel's live leg (`cancelPosition`), which
 * stops the wheel too: a wheel is never left running without a leg it can follow.
 *
 * The wheel becomes `stopped` at once when nothing of it can be at the exchange (no leg live, none
 * ever placed an order); otherwise `stopping`, and the runner finishes it once the exchange shows
 * no order of its legs. Either way the stop is recorded: the decision log says why once the wheel
 * is stopped, and `stop_raised` is journaled when the subaccount exists at the exchange.
 */
import type { Queryable, Sql } from '@wh/db'
import { append, minuteBucket } from '@wh/ledger'
import { recordDecision } from './decisions'
import { markStopping, stopIdle } from './wheel-store'
import type { StopMode } from './wheel-types'

/** Why a wheel stops: its user stopped it, or cancelled its live leg. */
export type StopCause = 'stopped_by_user' | 'leg_cancelled'

/** The reason a wheel stopped by the cancel of its leg shows (GET /positions). */
export const LEG_CANCELLED_REASON = 'stopped: its leg was cancelled'

/** In the caller's transaction: `stopped` when nothing of the wheel can rest at the exchange, else `stopping`. */
export async function settleStop(
  tx: Queryable,
  wheelId: string,
  mode: StopMode,
  at: Date,
  cause: StopCause,
): Promise<'stopped' | 'stopping'> {
  if (await stopIdle(tx, wheelId, mode, at, cause === 'leg_cancelled' ? LEG_CANCELLED_REASON : null)) return 'stopped'
  return (await markStopping(tx, wheelId, mode)) ? 'stopping' : 'stopped'
}

export interface StoppedWheel {
  readonly wheelId: string
  readonly userId: string
  /** the subaccount at the exchange; null before it is created (nothing to raise there) */
  readonly exchangeId: string | null
  readonly positionId?: string | null
}

/** After the stop's transaction: the decision (once stopped) and `stop_raised` (key `stop:{sub}:{minute}`). */
export async function announceStop(
  sql: Sql,
  w: StoppedWheel,
  state: 'stopped' | 'stopping',
  mode: StopMode,
  now: Date,
  cause: StopCause,
): Promise<void> {
  if (state === 'stopped')
    await recordDecision(sql, {
      wheelId: w.wheelId,
      userId: w.userId,
      positionId: w.positionId ?? null,
      kind: 'stopped',
      reason: cause,
      at: now,
    })
  if (w.exchangeId === null) return
  const why = cause === 'leg_cancelled' ? 'its leg was cancelled' : mode === 'now' ? 'now' : 'after the current cycle'
  await append(sql, {
    type: 'stop_raised',
    payload: {
      source: 'operator',
      subaccountId: w.exchangeId,
      minuteBucket: minuteBucket(now),
      reason: `wheel stopped by the user (${why})`,
      userId: w.userId,
    },
    occurredAt: now,
  })
}
