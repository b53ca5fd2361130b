/**
 * Bounded retries with exponential backoff and full jitter. Used only for idempotent reads
 * and transport failures: a state-changing call is never repeated blindly (it might have landed).
 */
export interface RetryPolicy {
  /** Total tries, the first included. */
  attempts: number
  baseDelayMs: number
  maxDelayMs: number
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 3, baseDelayMs: 200, maxDelayMs: 2_000 }

/** Delay before retry number `attempt` (1-based): random in [0, min(max, base * 2^(attempt-1))]. */
export function backoffMs(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1))
  return Math.floor(random() * cap)
}

export type Sleep = (ms: number) => Promise<void>
export const realSleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Runs `fn` until it succeeds, `shouldRetry` says no, or the attempts run out. */
export async function withRetry<T>(
  fn: (attempt: number) => Promise<T>,
  policy: RetryPolicy,
  shouldRetry: (err: unknown) => boolean,
  sleep: Sleep = realSleep,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn(attempt)
    } catch (err) {
      if (attempt >= policy.attempts || !shouldRetry(err)) throw err
      await sleep(backoffMs(attempt, policy))
    }
  }
}
