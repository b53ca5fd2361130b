import { describe, expect, it } from 'vitest'
import { bucketOf, closedBeforeMs, e18ToBaseUnits, HOUR_MS, sumByBucket } from './buckets'

const t = (h: number, m = 0, s = 0, ms = 0) => Date.UTC(2026, 0, 5, h, m, s, ms)

describe('accrual buckets', () => {
  it('an entry belongs to the UTC hour it falls in, the hour mark included', () => {
    expect(bucketOf(t(3))).toBe(t(3) / 1000)
    expect(bucketOf(t(3, 59, 59, 999))).toBe(t(3) / 1000)
    expect(bucketOf(t(4))).toBe(t(4) / 1000)
  })

  it('an hour is complete once it ended and the settle delay passed', () => {
    const settle = 5 * 60_000
    expect(closedBeforeMs(t(4, 4, 59), settle)).toBe(t(3))
    expect(closedBeforeMs(t(4, 5), settle)).toBe(t(4))
    expect(closedBeforeMs(t(4, 5), 0)).toBe(t(4))
  })

  it('sums signed entries per hour, in hour order, with the latest time of each', () => {
    const buckets = sumByBucket([
      { timestampMs: t(4), amountE18: 5n },
      { timestampMs: t(3, 40), amountE18: -2n },
      { timestampMs: t(3), amountE18: 10n },
    ])
    expect(buckets).toEqual([
      { bucketTs: t(3) / 1000, amountE18: 8n, lastMs: t(3, 40), entries: 2 },
      { bucketTs: t(4) / 1000, amountE18: 5n, lastMs: t(4), entries: 1 },
    ])
    expect(sumByBucket([])).toEqual([])
    expect(HOUR_MS).toBe(3_600_000)
  })

  it('rounds e18 to base units half to even, symmetrically for negative amounts', () => {
    const E12 = 10n ** 12n
    expect(e18ToBaseUnits(5_707_762_557_077_625n, 6)).toBe(5_708n)
    expect(e18ToBaseUnits(E12 / 2n, 6)).toBe(0n) // half: to the even 0
    expect(e18ToBaseUnits(E12 + E12 / 2n, 6)).toBe(2n) // half: to the even 2
    expect(e18ToBaseUnits(E12 / 2n + 1n, 6)).toBe(1n)
    expect(e18ToBaseUnits(-(E12 + E12 / 2n), 6)).toBe(-2n)
    expect(e18ToBaseUnits(-123n, 18)).toBe(-123n)
    expect(e18ToBaseUnits(15n * 10n ** 9n, 8)).toBe(2n) // 1.5e-8: BTC's unit, half to even
  })
})
