/**
 * What a position is, as a leaf the positions' modules share (docs/trading.md "Position states"):
 * its sides and states. positions.ts (the requests), position-store.ts (the one writer of
 * `positions`) and the placing step import it; it imports nothing, so none of them imports another
 * only for a type.
 */

export const POSITION_SIDES = ['put', 'call'] as const
export type PositionSide = (typeof POSITION_SIDES)[number]

/** States in which a position encumbers its collateral (docs/trading.md). */
export const LIVE_POSITION_STATES = ['requested', 'funding', 'placing', 'open', 'closing'] as const
export const POSITION_STATES = [...LIVE_POSITION_STATES, 'settled', 'closed', 'cancelled', 'failed'] as const
export type PositionState = (typeof POSITION_STATES)[number]
