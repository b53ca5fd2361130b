/**
 * Rate limits per method tag, as Derive applies them: each method has a class (the kept spec's
 * `x-rate-limit-class`: `matching` for order entry and cancels, `non_matching` for everything else,
 * `endpoint` and `custom` for a few with their own quota), and a fixed window refills each class's
 * allowance (five seconds on Derive, third party: nautilus_derive `common/rate_limit.rs`, citing
 * docs.derive.xyz `reference/rate-limits`). Matching traffic counts per account, the rest per
 * account when signed in and per IP when not; a call over its allowance is refused with -32000
 * "Rate limit exceeded" (docs.derive.xyz `reference/error-codes`). The allowances are the
 * simulator's own figures (Derive gives each account its own, `private/get_account`); off unless
 * configured (`SimulatorOptions.rateLimits`).
 */

export type RateLimitClass = 'matching' | 'non_matching' | 'endpoint' | 'custom'

/** The class of every method the simulator serves, as the kept spec tags it (a test compares the two). */
export const RATE_LIMIT_CLASS: Record<string, RateLimitClass> = {
  'private/order': 'matching',
  'private/cancel': 'matching',
  'private/cancel_all': 'endpoint',
  'private/set_session_key': 'endpoint',
  'public/get_all_live_instruments': 'custom',
}

export function rateLimitClassOf(method: string): RateLimitClass {
  return RATE_LIMIT_CLASS[method] ?? 'non_matching'
}

/** Requests each class allows per window (per account or IP; `endpoint` and `custom` per method too). */
export interface RateLimits {
  windowMs: number
  matching: number
  nonMatching: number
  endpoint: number
  custom: number
}

export class RateLimiter {
  readonly #counts = new Map<string, number>()
  #windowStart = 0

  constructor(
    readonly limits: RateLimits,
    private readonly nowMs: () => number = Date.now,
  ) {}

  /** Counts one call of `method` by `who` (an account or an IP); false when it is over its class's allowance. */
  take(who: string, method: string): boolean {
    const now = this.nowMs()
    if (now - this.#windowStart >= this.limits.windowMs) {
      this.#windowStart = now - (now % this.limits.windowMs)
      this.#counts.clear()
    }
    const cls = rateLimitClassOf(method)
    const key = cls === 'endpoint' || cls === 'custom' ? `${cls}:${who}:${method}` : `${cls}:${who}`
    const n = (this.#counts.get(key) ?? 0) + 1
    this.#counts.set(key, n)
    return n <= this.allowance(cls)
  }

  allowance(cls: RateLimitClass): number {
    const l = this.limits
    return cls === 'matching'
      ? l.matching
      : cls === 'non_matching'
        ? l.nonMatching
        : cls === 'endpoint'
          ? l.endpoint
          : l.custom
  }
}
