/**
 * DELETE /positions/:id (docs/trading.md "Position states", "Buying a leg back", "The wheel"): the
 * one call behind the route. The id names a leg or a wheel of the caller, and what happens follows
 * from what it names: a leg not sold yet is cancelled (at once, or its resting orders are asked to
 * end), a sold leg is bought back at a quoted price, a wheel is stopped. The answer is a tag the
 * route maps to its response. The choice is read under the leg's row lock (`tryCancelPosition`),
 * not by catching one function's error to try the next; the errors that remain are the answers
 * (404 neither a leg nor a wheel of the caller's, 409 finished or not closable, 422 stopped, 503
 * no price).
 */
import type { Clock } from '@wh/core'
import type { Sql } from '@wh/db'
import { type CancelResult, tryCancelPosition } from './position-cancel'
import { type CloseResult, closePosition, type PriceReader } from './positions'
import { stopWheel } from './wheel'
import type { StopMode } from './wheel-types'

/** What DELETE /positions/:id did. */
export type PositionEnd =
  /** a leg not at the exchange: cancelled now (its reserved funding released) */
  | { kind: 'cancelled'; cancel: CancelResult }
  /** a leg placing: the placing step cancels its orders, then the leg ends */
  | { kind: 'cancel_requested'; cancel: CancelResult }
  /** a sold leg: quoted, and bought back by the placing step at the quote's limit */
  | { kind: 'closing'; close: CloseResult }
  /** a wheel: stopped now, or stopping until nothing of it rests at the exchange */
  | { kind: 'stopped' | 'stopping'; stop: Awaited<ReturnType<typeof stopWheel>> }

export interface EndOptions {
  /** reads a sold leg's ticker for its buy-back quote */
  readonly prices: PriceReader
  /** for a wheel: `after_cycle` (the live leg runs to its end) or `now` */
  readonly mode: StopMode
  readonly clock: Clock
}

/**
 * Ends what `id` names for `userId`: cancels a leg, buys a sold leg back, or stops a wheel.
 * Throws what the chosen action throws: PositionFinishedError (409), CloseUnavailableError (409),
 * SubaccountStoppedError (422), QuoteUnavailableError (503), NotFoundError (404: neither a leg nor a
 * wheel of the caller's).
 *
 * @example
 *   const end = await endPosition(sql, userId, id, { prices, mode: 'after_cycle', clock })
 *   if (end.kind === 'closing') reply.code(202).send(end.close.quote)
 */
export async function endPosition(sql: Sql, userId: string, id: string, o: EndOptions): Promise<PositionEnd> {
  const attempt = await tryCancelPosition(sql, userId, id, o.clock.now())
  if (attempt.kind === 'done') return { kind: attempt.result.outcome, cancel: attempt.result }
  if (attempt.kind === 'sold')
    return { kind: 'closing', close: await closePosition(sql, userId, id, o.prices, o.clock.now()) }
  // not a leg of the caller's: perhaps one of their wheels (404 when it is not either)
  const stop = await stopWheel(sql, userId, id, o.mode, o.clock.now(), o.prices)
  return { kind: stop.state, stop }
}
