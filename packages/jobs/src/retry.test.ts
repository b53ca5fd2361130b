import { describe, expect, it } from 'vitest'
import { RETRY_BASE_DELAY_MS, RETRY_JITTER, RETRY_MAX_DELAY_MS, retryDelayMs } from './retry'

describe('retryDelayMs', () => {
  it('doubles per failure from the base delay, without jitter at the midpoint', () => {
    const mid = () => 0.5
    expect(retryDelayMs(1, mid)).toBe(RETRY_BASE_DELAY_MS)
    expect(retryDelayMs(2, mid)).toBe(RETRY_BASE_DELAY_MS * 2)
    expect(retryDelayMs(4, mid)).toBe(RETRY_BASE_DELAY_MS * 8)
  })

  it('is capped, however many failures (no overflow to Infinity)', () => {
    expect(retryDelayMs(10_000, () => 0.5)).toBe(RETRY_MAX_DELAY_MS)
    expect(retryDelayMs(10_000, () => 1)).toBe(Math.round(RETRY_MAX_DELAY_MS * (1 + RETRY_JITTER)))
  })

  it('spreads rows that failed together within the jitter band', () => {
    expect(retryDelayMs(1, () => 0)).toBe(Math.round(RETRY_BASE_DELAY_MS * (1 - RETRY_JITTER)))
    expect(retryDelayMs(1, () => 1)).toBe(Math.round(RETRY_BASE_DELAY_MS * (1 + RETRY_JITTER)))
  })

  it('treats a zero or fractional count as a first failure', () => {
    expect(retryDelayMs(0, () => 0.5)).toBe(RETRY_BASE_DELAY_MS)
    expect(retryDelayMs(1.7, () => 0.5)).toBe(RETRY_BASE_DELAY_MS)
  })
})
