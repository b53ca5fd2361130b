/**
 * What a wheel is, as a leaf the wheel's modules share (docs/trading.md "The wheel"): its states and
 * how it stops. wheel.ts (the API's start, stop, resume), wheel-stop.ts and wheel-store.ts (the one
 * writer of `wheels`) import it; it imports nothing.
 */

export type WheelState = 'running' | 'stopping' | 'stopped'
/** `after_cycle`: the live leg runs to its end; `now`: its orders are cancelled or it is bought back. */
export type StopMode = 'after_cycle' | 'now'
