/**
 * Operators' sign-ins are throttled (docs/operations.md "Operators and roles"): a guessed password
 * costs the guesser time, and a flood of them cannot exhaust the listener.
 *
 * - Per operator name: after NAME_FAILURES failed sign-ins within WINDOW_MS the name is refused
 *   (429, no hash computed) until the window ends; a success clears its count. This bounds guessing
 *   of one operator's password to a few a quarter of an hour, from any number of addresses.
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

interface Count {
  failures: number
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

  #blocked(map: Lru<string, Count>, key: string, max: number): number | undefined {
    const c = map.get(key)
    if (!c) return undefined
    const left = c.since + WINDOW_MS - this.#now()
    if (left <= 0) return undefined
    return c.failures >= max ? Math.ceil(left / 1000) : undefined
  }

  #fail(map: Lru<string, Count>, key: string): void {
    const c = map.get(key)
    const now = this.#now()
    if (!c || now - c.since >= WINDOW_MS) map.set(key, { failures: 1, since: now })
    else map.set(key, { failures: c.failures + 1, since: c.since })
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
   * (undefined from `check`) against both, and clears the name's count on success.
   */
  async attempt<T>(address: string, name: string, check: () => Promise<T | undefined>): Promise<T | undefined> {
    const byName = this.#blocked(this.#names, name, NAME_FAILURES)
    if (byName !== undefined) throw new SignInThrottledError(byName, 'for this operator')
    const byAddress = this.#blocked(this.#addresses, address, ADDRESS_FAILURES)
    if (byAddress !== undefined) throw new SignInThrottledError(byAddress, 'from this address')
    await this.#slot()
    let result: T | undefined
    try {
      result = await check()
    } finally {
      this.#release()
    }
    if (result === undefined) {
      this.#fail(this.#names, name)
      this.#fail(this.#addresses, address)
    } else this.#names.set(name, { failures: 0, since: this.#now() })
    return result
  }
}
