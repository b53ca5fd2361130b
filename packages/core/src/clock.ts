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

/**
 * A clock that follows a time source it can only ask asynchronously, such as the exchange's
 * `public/get_time` (the local run's worker follows the Derive simulator, whose time the demo moves
 * ahead). `now()` is the wall clock plus the offset measured by the last `sync()`, so it stays
 * synchronous and runs at the wall clock's pace between two syncs.
 *
 * @example
 *   const clock = new FollowedClock(() => exchange.getTime())
 *   await clock.sync() // before each job that reads it
 *   clock.now()
 */
export class FollowedClock implements Clock {
  readonly #read: () => Promise<number>
  #offsetMs = 0
  constructor(read: () => Promise<number>) {
    this.#read = read
  }
  now(): Date {
    return new Date(Date.now() + this.#offsetMs)
  }
  /** The offset to the source's time now, counting half the round trip; the source failing keeps the last one. */
  async sync(): Promise<boolean> {
    const sentMs = Date.now()
    let sourceMs: number
    try {
      sourceMs = await this.#read()
    } catch {
      return false
    }
    if (!Number.isFinite(sourceMs)) return false
    this.#offsetMs = Math.round(sourceMs - (sentMs + Date.now()) / 2)
    return true
  }
}
