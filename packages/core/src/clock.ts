/** Every "now" in domain code comes from a Clock, so tests control time instead of sleeping. */
export interface Clock {
  now(): Date
}

export const systemClock: Clock = { now: () => new Date() }

/** A clock that only moves when told to. */
export class ManualClock implements Clock {
  #ms: number
  constructor(start: Date | number = Date.UTC(2026, 0, 1)) {
    this.#ms = typeof start === 'number' ? start : start.getTime()
  }
  now(): Date {
    return new Date(this.#ms)
  }
  set(to: Date | number): void {
    this.#ms = typeof to === 'number' ? to : to.getTime()
  }
  advance(ms: number): void {
    this.#ms += ms
  }
}
