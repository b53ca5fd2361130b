/**
 * Operators' sign-ins are throttled (docs/operations.md "Operators and roles"): a guessed password
 * costs the guesser time, and a flood of them cannot exhaust the listener.
 *
 * - Per operator name: after NAME_FAILURES failed sign-ins within WINDOW_MS the name is refused
 *   (429, no hash computed) until the window ends; a success clears its count. This bounds guessing
 *   of one operator's password to a few a quarter of an hour, from any number of addresses. A
 *   sign-in being checked counts as a failure until it ends, so a burst sent at once gets no more.
 * - Per address: after ADDRESS_FAILURES failures within WINDOW_MS, that address is refused.
 * - The hashing itself: at most MAX_HASHING sign-ins compute a hash at once (32 MiB of memory
 *   each), MAX_WAITING wait their turn, and the rest are refused at once (429).
 *
 * Counted in this process (bounded maps, the oldest forgotten): a cluster's processes each count
 * their own, like the sign-in limit of the public API.
 */
import { AppError, Lru } from '@wh/core'

export const WINDOW_MS = 15 * 60_000
export const NAME_FAILURES = 5
export const ADDRESS_FAILURES = 20
export const MAX_HASHING = 2
export const MAX_WAITING = 8

/**
 * One name's or address's sign-ins in the current window: the failures counted, and those being
 * checked now. A sign-in is counted when it starts, before its hash (a burst of parallel guesses
 * each reads the count the others left, so counting only once a hash failed let all of them
 * through), and ends as a failure or is taken back.
 */
interface Count {
  failures: number
  checking: number
  since: number
}

/** Sign-in refused for now (429 with a Retry-After in seconds). */
export class SignInThrottledError extends AppError {
  constructor(retryAfterS: number, why: string) {
    super({
      code: 'SIGN_IN_THROTTLED',
      statusCode: 429,
      retryable: true,
      message: `too many sign-ins (${why}); try again in ${retryAfterS} s`,
      details: { retryAfterS },
    })
  }
}

export class LoginThrottle {
  readonly #names = new Lru<string, Count>(10_000)
  readonly #addresses = new Lru<string, Count>(10_000)
  readonly #now: () => number
  #hashing = 0
  readonly #waiting: Array<() => void> = []

  constructor(now: () => number = Date.now) {
    this.#now = now
  }

  /** The live count of `key` (a new window once the last one ended; sign-ins being checked carry over). */
  #count(map: Lru<string, Count>, key: string): Count {
    const now = this.#now()
    const c = map.get(key)
    if (c && now - c.since < WINDOW_MS) return c
    const fresh = { failures: 0, checking: c?.checking ?? 0, since: now }
    map.set(key, fresh)
    return fresh
  }

  /** Seconds until `c`'s window ends when it is at `max` (its failures and the sign-ins being checked), else undefined. */
  #blocked(c: Count, max: number): number | undefined {
    if (c.failures + c.checking < max) return undefined
    return Math.max(1, Math.ceil((c.since + WINDOW_MS - this.#now()) / 1000))
  }

  /** One sign-in of `key` checked: a failure counted, a success clearing the count, or (undefined) taken back. */
  #end(map: Lru<string, Count>, key: string, outcome: 'failed' | 'succeeded' | undefined): void {
    const c = this.#count(map, key)
    c.checking = Math.max(0, c.checking - 1)
    if (outcome === 'failed') c.failures++
    if (outcome === 'succeeded') {
      c.failures = 0
      c.since = this.#now()
    }
  }

  async #slot(): Promise<void> {
    if (this.#hashing < MAX_HASHING) {
      this.#hashing++
      return
    }
    if (this.#waiting.length >= MAX_WAITING) throw new SignInThrottledError(1, 'the desk is busy checking passwords')
    await new Promise<void>((resolve) => this.#waiting.push(resolve))
  }

  #release(): void {
    const next = this.#waiting.shift()
    if (next) next()
    else this.#hashing--
  }

  /**
   * Runs `check` (the password hash) unless `address` or `name` is throttled; counts a failure
   * (undefined from `check`) against both, and clears the name's count on success. The sign-in is
   * counted before its hash, so of N at once for one name at most NAME_FAILURES are checked.
   */
  async attempt<T>(address: string, name: string, check: () => Promise<T | undefined>): Promise<T | undefined> {
    const byName = this.#count(this.#names, name)
    const byAddress = this.#count(this.#addresses, address)
    const nameLeft = this.#blocked(byName, NAME_FAILURES)
    if (nameLeft !== undefined) throw new SignInThrottledError(nameLeft, 'for this operator')
    const addressLeft = this.#blocked(byAddress, ADDRESS_FAILURES)
    if (addressLeft !== undefined) throw new SignInThrottledError(addressLeft, 'from this address')
    // counted now, in the same turn as the check above: the next sign-in of this name sees it
    byName.checking++
    byAddress.checking++
    let result: T | undefined
    try {
      await this.#slot()
      try {
        result = await check()
      } finally {
        this.#release()
      }
    } catch (e) {
      // not checked (the desk busy) or the check itself failed: no guess was judged, the count is taken back
      this.#end(this.#names, name, undefined)
      this.#end(this.#addresses, address, undefined)
      throw e
    }
    this.#end(this.#names, name, result === undefined ? 'failed' : 'succeeded')
    this.#end(this.#addresses, address, result === undefined ? 'failed' : undefined)
    return result
  }
}
