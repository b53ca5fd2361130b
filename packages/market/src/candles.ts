/**
 * Candle aggregation from index-price ticks: pure, bigint e18 prices, exchange timestamps.
 * The feed folds every tick into the open candle of each interval and flushes the touched candles
 * in batches; a flushed partial candle is merged into the stored one by the same rule as
 * `mergeCandles` (the upsert in candle-store.ts), so flushing often or after a holder hand-over
 * never loses an open, a high, a low or a close.
 */
import { maxBig, minBig } from '@wh/exchange'

export const CANDLE_INTERVAL_MS = Object.freeze({
  '1m': 60_000,
  '5m': 5 * 60_000,
  '1h': 60 * 60_000,
  '1d': 24 * 60 * 60_000,
} as const)
export type CandleInterval = keyof typeof CANDLE_INTERVAL_MS
export const CANDLE_INTERVALS = Object.keys(CANDLE_INTERVAL_MS) as CandleInterval[]

export function isCandleInterval(value: string): value is CandleInterval {
  return Object.hasOwn(CANDLE_INTERVAL_MS, value)
}

export interface Candle {
  readonly asset: string
  readonly interval: CandleInterval
  /** UTC start of the bucket, aligned to the interval */
  readonly bucketStartMs: number
  readonly openE18: bigint
  readonly highE18: bigint
  readonly lowE18: bigint
  readonly closeE18: bigint
  readonly tickCount: number
  readonly firstTickMs: number
  readonly lastTickMs: number
}

/** @example bucketStartMs(Date.UTC(2026, 0, 1, 10, 7, 30), '5m') === Date.UTC(2026, 0, 1, 10, 5) */
export function bucketStartMs(tsMs: number, interval: CandleInterval): number {
  const size = CANDLE_INTERVAL_MS[interval]
  return Math.floor(tsMs / size) * size
}

/** A candle of one tick. */
export function candleOfTick(asset: string, interval: CandleInterval, tsMs: number, priceE18: bigint): Candle {
  return {
    asset,
    interval,
    bucketStartMs: bucketStartMs(tsMs, interval),
    openE18: priceE18,
    highE18: priceE18,
    lowE18: priceE18,
    closeE18: priceE18,
    tickCount: 1,
    firstTickMs: tsMs,
    lastTickMs: tsMs,
  }
}

/**
 * Two partial candles of the same bucket as one: the earlier open, the later close (ties go to
 * `b`, the newer batch), the extreme high and low, the counts added. Commutative in everything but
 * ties, associative: the order flushes arrive in does not matter.
 */
export function mergeCandles(a: Candle, b: Candle): Candle {
  if (a.asset !== b.asset || a.interval !== b.interval || a.bucketStartMs !== b.bucketStartMs)
    throw new RangeError('mergeCandles: candles of different buckets')
  return {
    asset: a.asset,
    interval: a.interval,
    bucketStartMs: a.bucketStartMs,
    openE18: b.firstTickMs < a.firstTickMs ? b.openE18 : a.openE18,
    highE18: maxBig(a.highE18, b.highE18),
    lowE18: minBig(a.lowE18, b.lowE18),
    closeE18: b.lastTickMs >= a.lastTickMs ? b.closeE18 : a.closeE18,
    tickCount: a.tickCount + b.tickCount,
    firstTickMs: Math.min(a.firstTickMs, b.firstTickMs),
    lastTickMs: Math.max(a.lastTickMs, b.lastTickMs),
  }
}

/** Pending candles this many or more: the feed flushes before its timer (a bound on memory). */
export const MAX_PENDING_CANDLES = 10_000

/**
 * Folds ticks into candles of every interval and hands the touched ones over in `drain()`.
 * Holds only what changed since the last drain (at most MAX_PENDING_CANDLES).
 */
export class CandleAggregator {
  readonly #intervals: readonly CandleInterval[]
  readonly #pending = new Map<string, Candle>()

  constructor(intervals: readonly CandleInterval[] = CANDLE_INTERVALS) {
    this.#intervals = intervals
  }

  /** Folds one tick (exchange time, e18 price) into every interval's candle. */
  add(asset: string, tsMs: number, priceE18: bigint): void {
    if (priceE18 <= 0n) throw new RangeError('a price must be positive')
    for (const interval of this.#intervals) {
      const tick = candleOfTick(asset, interval, tsMs, priceE18)
      const key = `${asset}|${interval}|${tick.bucketStartMs}`
      const open = this.#pending.get(key)
      this.#pending.set(key, open ? mergeCandles(open, tick) : tick)
    }
  }

  /** Puts drained candles back (a failed write): merged with whatever arrived since, nothing lost. */
  restore(candles: readonly Candle[]): void {
    for (const c of candles) {
      const key = `${c.asset}|${c.interval}|${c.bucketStartMs}`
      const newer = this.#pending.get(key)
      this.#pending.set(key, newer ? mergeCandles(c, newer) : c)
    }
  }

  /** Candles touched since the last drain, one per bucket (so one upsert can carry them all). */
  drain(): Candle[] {
    const out = [...this.#pending.values()]
    this.#pending.clear()
    return out
  }

  get pendingCount(): number {
    return this.#pending.size
  }
}
