import { describe, expect, it } from 'vitest'
import {
  type Cycle,
  DAY_MS,
  holdStats,
  maxDrawdown,
  pctString,
  RATIO_ONE,
  ratioString,
  returnSeries,
  windowStats,
} from './strategies'

const E18 = 10n ** 18n
const USDC = (n: number) => BigInt(Math.round(n * 1e6))
const S = Date.UTC(2026, 0, 1, 8)

function cycle(o: Partial<Cycle> & { premium: bigint; collateral: bigint; expiryMs: number }): Cycle {
  return {
    strategy: 'put',
    side: 'put',
    instrument: `BTC-${o.expiryMs}-P`,
    strikeE18: 100_000n * E18,
    soldAtMs: o.expiryMs - 2 * DAY_MS,
    legs: 1,
    filledE18: E18 / 10n,
    fees: 0n,
    settlementCost: 0n,
    settled: true,
    outcome: 'otm',
    indexAtSaleE18: null,
    ivAtSaleE18: null,
    ...o,
  }
}

// +1.8 %, then −10 % (in the money), then +3 %: hand-computed below
const A = cycle({ premium: USDC(200), fees: USDC(20), collateral: USDC(10_000), expiryMs: S + 7 * DAY_MS })
const B = cycle({
  premium: USDC(200),
  fees: USDC(20),
  settlementCost: USDC(1_180),
  outcome: 'itm',
  collateral: USDC(10_000),
  expiryMs: S + 14 * DAY_MS,
})
const C = cycle({ premium: USDC(300), collateral: USDC(10_000), expiryMs: S + 60 * DAY_MS })

describe('strategy statistics (bigint, losses included)', () => {
  it('the cumulative return compounds every settled period, the losing one included', () => {
    const s = returnSeries([C, A, B])
    expect(s.map((p) => pctString(p.periodReturn))).toEqual(['1.8000', '-10.0000', '3.0000'])
    // 1.018 × 0.9 × 1.03 − 1 = −0.056314
    expect(s.map((p) => pctString(p.cumulative))).toEqual(['1.8000', '-8.3800', '-5.6314'])
  })

  it('cycles settling at one expiry form one period: their aggregate return', () => {
    const twin = cycle({ premium: USDC(0), fees: USDC(10), collateral: USDC(30_000), expiryMs: A.expiryMs })
    // (180 − 10) / 40,000 = 0.425 %
    expect(pctString(returnSeries([A, twin])[0]?.periodReturn ?? 0n)).toBe('0.4250')
  })

  it('window statistics: return, annualised, hit ratio, average loss, drawdown (hand-computed)', () => {
    const now = S + 73 * DAY_MS // 365 / 73 = 5
    const all = windowStats([A, B, C], S, now)
    expect(all.settledCycles).toBe(3)
    expect(all.losingCycles).toBe(1)
    expect(pctString(all.realisedReturn ?? 0n)).toBe('-5.6314')
    expect(pctString(all.annualisedReturn ?? 0n)).toBe('-28.1570')
    expect(ratioString(all.hitRatio ?? 0n)).toBe('0.6666')
    expect(ratioString(all.otmRatio ?? 0n)).toBe('0.6666')
    expect(pctString(all.averageLoss ?? 0n)).toBe('-10.0000')
    // peak 1.018, trough 0.9162: exactly 10 % below the peak
    expect(pctString(all.maxDrawdown ?? 0n)).toBe('10.0000')

    // the last 4 weeks hold C only
    const recent = windowStats([A, B, C], now - 28 * DAY_MS, now)
    expect(recent.settledCycles).toBe(1)
    expect(pctString(recent.realisedReturn ?? 0n)).toBe('3.0000')
    expect(pctString(recent.annualisedReturn ?? 0n)).toBe('39.1071') // 3 % × 365 / 28
    expect(recent.averageLoss).toBeNull()
    expect(recent.maxDrawdown).toBe(0n)
  })

  it('a losing cycle lowers every figure', () => {
    const now = S + 73 * DAY_MS
    const without = windowStats([A, C], S, now)
    const withLoss = windowStats([A, B, C], S, now)
    expect((withLoss.realisedReturn ?? 0n) < (without.realisedReturn ?? 0n)).toBe(true)
    expect((withLoss.annualisedReturn ?? 0n) < (without.annualisedReturn ?? 0n)).toBe(true)
    expect((withLoss.hitRatio ?? 0n) < (without.hitRatio ?? 0n)).toBe(true)
    expect((withLoss.maxDrawdown ?? 0n) > (without.maxDrawdown ?? 0n)).toBe(true)
    expect(without.hitRatio).toBe(RATIO_ONE)
  })

  it('open cycles are not realised; an empty window has no figures', () => {
    const open = cycle({
      premium: USDC(100),
      collateral: USDC(1_000),
      expiryMs: S + DAY_MS,
      settled: false,
      outcome: null,
    })
    const w = windowStats([open], S, S + 10 * DAY_MS)
    expect(w).toMatchObject({ settledCycles: 0, realisedReturn: null, hitRatio: null, maxDrawdown: null })
  })

  it('holding: return, annualised and drawdown over the closes', () => {
    const h = holdStats([100_000n * E18, 80_000n * E18, 110_000n * E18], S, S + 73 * DAY_MS)
    expect(pctString(h?.return ?? 0n)).toBe('10.0000')
    expect(pctString(h?.annualisedReturn ?? 0n)).toBe('50.0000')
    expect(pctString(h?.maxDrawdown ?? 0n)).toBe('20.0000')
    expect(holdStats([E18], S, S + DAY_MS)).toBeNull()
  })

  it('formats truncate toward zero and never print a negative zero', () => {
    expect(pctString(-1n)).toBe('0.0000')
    expect(pctString((-RATIO_ONE * 123_456n) / 10_000_000n)).toBe('-1.2345')
    expect(ratioString((RATIO_ONE * 2n) / 3n)).toBe('0.6666')
    expect(maxDrawdown([])).toBe(0n)
  })
})
