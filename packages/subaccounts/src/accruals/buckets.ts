/**
 * Hourly accrual buckets (docs/exchange.md "Accruals and reconciliation"): which hour an entry of
 * the exchange's interest or funding history belongs to, which hours are complete, and the sum of
 * each hour in the journal's base units. Pure functions; accruals.ts beside it does the I/O.
 */
import { fromBaseUnits, toBaseUnits } from '@wh/core'

export const HOUR_MS = 3_600_000

/** One history entry: Derive's decimal string parsed to e18 (its internal unit), signed. */
export interface AccrualEntry {
  readonly timestampMs: number
  readonly amountE18: bigint
}

export interface Bucket {
  /** epoch seconds of the UTC hour (spec 6.1 `accrual:{sub}:{type}:{bucketTs}`) */
  readonly bucketTs: number
  readonly amountE18: bigint
  /** the latest entry's time: the event's occurredAt */
  readonly lastMs: number
  readonly entries: number
}

/** Epoch seconds of the UTC hour `timestampMs` falls in. @example bucketOf(Date.UTC(2026, 0, 5, 3, 45)) === Date.UTC(2026, 0, 5, 3) / 1000 */
export function bucketOf(timestampMs: number): number {
  return Math.floor(timestampMs / HOUR_MS) * (HOUR_MS / 1000)
}

/**
 * The end (ms, exclusive) of the complete buckets at `nowMs`: an hour is complete once it has
 * passed and `settleMs` more, so an entry the exchange writes a little late still lands before
 * the bucket is recorded (a recorded bucket is deduplicated forever: spec 6 rule 3).
 * @example closedBeforeMs(Date.UTC(2026, 0, 5, 4, 4), 300_000) === Date.UTC(2026, 0, 5, 3)
 */
export function closedBeforeMs(nowMs: number, settleMs: number): number {
  return Math.floor((nowMs - settleMs) / HOUR_MS) * HOUR_MS
}

/** Sums entries per hour, in hour order. */
export function sumByBucket(entries: readonly AccrualEntry[]): Bucket[] {
  const byTs = new Map<number, { amountE18: bigint; lastMs: number; entries: number }>()
  for (const e of entries) {
    const ts = bucketOf(e.timestampMs)
    const b = byTs.get(ts) ?? { amountE18: 0n, lastMs: e.timestampMs, entries: 0 }
    b.amountE18 += e.amountE18
    b.lastMs = Math.max(b.lastMs, e.timestampMs)
    b.entries += 1
    byTs.set(ts, b)
  }
  return [...byTs.entries()].sort(([a], [b]) => a - b).map(([bucketTs, b]) => ({ bucketTs, ...b }))
}

/**
 * e18 (Derive's unit) to base units of a currency with `decimals` places, rounded half to even:
 * exact for the whole bucket, so the rounding error is at most half a base unit per bucket and
 * has no bias toward either side (docs/exchange.md "Rounding").
 * @example e18ToBaseUnits(5_707_762_557_077_625n, 6) === 5_708n
 */
export function e18ToBaseUnits(amountE18: bigint, decimals: number): bigint {
  return toBaseUnits(fromBaseUnits(amountE18, 18), decimals, 'half-even')
}
