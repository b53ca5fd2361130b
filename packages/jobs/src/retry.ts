/**
 * Fair queues (docs/hostile-world.md "Fair queues"): a row whose preparation fails is tried again
 * after a delay that grows with its failures, and ticks take the rows that are due, soonest
 * first. A row that fails forever therefore costs one slot per backoff period instead of standing
 * first in line, and the rows behind it are served in their usual time.
 */

/** The first retry of a failed row comes this long after the failure. */
export const RETRY_BASE_DELAY_MS = 15_000
/** Retries are never further apart than this (a row that keeps failing is still looked at). */
export const RETRY_MAX_DELAY_MS = 15 * 60_000
/** ± this share of the delay, so rows that failed together do not come back together. */
export const RETRY_JITTER = 0.2

/**
 * The delay before the next try of a row that has now failed `attempts` times (1 for the first
 * failure): RETRY_BASE_DELAY_MS doubled per failure, capped at RETRY_MAX_DELAY_MS, with jitter.
 *
 * @example retryDelayMs(1) // about 15 s; retryDelayMs(3) about 60 s; retryDelayMs(20) about 15 min
 */
export function retryDelayMs(attempts: number, random: () => number = Math.random): number {
  const n = Math.max(1, Math.floor(attempts))
  const raw = Math.min(RETRY_MAX_DELAY_MS, RETRY_BASE_DELAY_MS * 2 ** Math.min(n - 1, 30))
  const jitter = 1 + RETRY_JITTER * (2 * random() - 1)
  return Math.round(raw * jitter)
}
