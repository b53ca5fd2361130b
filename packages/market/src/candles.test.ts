import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { bucketStartMs, type Candle, CandleAggregator, candleOfTick, mergeCandles } from './candles'

const T0 = Date.UTC(2026, 0, 5, 10, 0, 0)
const p = (n: number) => BigInt(n) * 10n ** 18n

describe('candle aggregation', () => {
  it('aligns buckets to the interval in UTC', () => {
    const t = Date.UTC(2026, 0, 5, 10, 7, 30, 250)
    expect(bucketStartMs(t, '1m')).toBe(Date.UTC(2026, 0, 5, 10, 7))
    expect(bucketStartMs(t, '5m')).toBe(Date.UTC(2026, 0, 5, 10, 5))
    expect(bucketStartMs(t, '1h')).toBe(Date.UTC(2026, 0, 5, 10))
    expect(bucketStartMs(t, '1d')).toBe(Date.UTC(2026, 0, 5))
  })

  it('folds ticks into open, high, low, close per bucket of every interval', () => {
    const agg = new CandleAggregator()
    agg.add('ETH', T0 + 1_000, p(3000))
    agg.add('ETH', T0 + 20_000, p(3100))
    agg.add('ETH', T0 + 40_000, p(2900))
    agg.add('ETH', T0 + 59_999, p(3050))
    agg.add('ETH', T0 + 60_000, p(3060)) // next minute, same 5m/1h/1d bucket
    const out = agg.drain()
    const m1 = out.filter((c) => c.interval === '1m').sort((a, b) => a.bucketStartMs - b.bucketStartMs)
    expect(m1).toHaveLength(2)
    expect(m1[0]).toMatchObject({
      openE18: p(3000),
      highE18: p(3100),
      lowE18: p(2900),
      closeE18: p(3050),
      tickCount: 4,
    })
    expect(m1[1]).toMatchObject({ openE18: p(3060), closeE18: p(3060), tickCount: 1 })
    const m5 = out.filter((c) => c.interval === '5m')
    expect(m5).toHaveLength(1)
    expect(m5[0]).toMatchObject({
      openE18: p(3000),
      highE18: p(3100),
      lowE18: p(2900),
      closeE18: p(3060),
      tickCount: 5,
    })
    expect(out.filter((c) => c.interval === '1d')).toHaveLength(1)
    expect(agg.pendingCount).toBe(0)
  })

  it('a tick arriving out of order moves neither the open nor the close wrongly', () => {
    const agg = new CandleAggregator(['1m'])
    agg.add('ETH', T0 + 30_000, p(3000))
    agg.add('ETH', T0 + 10_000, p(2000)) // earlier: becomes the open
    agg.add('ETH', T0 + 50_000, p(3500))
    agg.add('ETH', T0 + 40_000, p(1000)) // earlier than the close: only the low
    const [c] = agg.drain()
    expect(c).toMatchObject({ openE18: p(2000), closeE18: p(3500), lowE18: p(1000), highE18: p(3500) })
  })

  it('refuses a non-positive price', () => {
    expect(() => new CandleAggregator().add('ETH', T0, 0n)).toThrow(RangeError)
  })

  it('merging flushed batches in any grouping gives the candle of all ticks at once', () => {
    const tick = fc.record({ dtMs: fc.integer({ min: 0, max: 59_999 }), price: fc.integer({ min: 1, max: 10_000 }) })
    fc.assert(
      fc.property(fc.array(tick, { minLength: 1, maxLength: 40 }), fc.integer({ min: 1, max: 39 }), (ticks, cut) => {
        // distinct timestamps: with equal ones the close is "the later batch's", which is arrival order
        const seen = new Set<number>()
        const uniq = ticks.filter((t) => !seen.has(t.dtMs) && seen.add(t.dtMs))
        const all = new CandleAggregator(['1m'])
        for (const t of uniq) all.add('ETH', T0 + t.dtMs, p(t.price))
        const [whole] = all.drain()
        const batches: Candle[] = []
        const agg = new CandleAggregator(['1m'])
        uniq.forEach((t, i) => {
          agg.add('ETH', T0 + t.dtMs, p(t.price))
          if (i % cut === cut - 1) batches.push(...agg.drain())
        })
        batches.push(...agg.drain())
        const merged = batches.reduceRight((acc, c) => mergeCandles(c, acc))
        expect(merged).toEqual(whole)
      }),
    )
  })

  it('merging candles of different buckets is refused', () => {
    expect(() =>
      mergeCandles(candleOfTick('ETH', '1m', T0, p(1)), candleOfTick('ETH', '1m', T0 + 60_000, p(1))),
    ).toThrow()
  })
})
