import { describe, expect, it } from 'vitest'
import {
  bpsPercent,
  decisionMessage,
  e18Decimal,
  expiryFacts,
  MAX_CANDIDATES,
  noStrikeReason,
  strikeFacts,
  yieldFacts,
} from './decisions'
import { E18, expiryChoice, type OptionQuote, strikeChoice } from './placing'
import { tradingProfile } from './profiles'

const p = tradingProfile('balanced') // target 0.20 ± 0.07, 40 h to 8 days, 5 % a year
const e18 = (n: number) => BigInt(Math.round(n * 1e6)) * 10n ** 12n
const NOW = Date.UTC(2026, 10, 23, 9) // Monday 09:00
const h = (hours: number) => NOW / 1000 + hours * 3600
const q = (strike: number, type: 'P' | 'C', deltaBps: number, mark = 10): OptionQuote => ({
  instrument: `ETH-X-${strike}-${type}`,
  expirySec: h(47),
  strikeE18: e18(strike),
  type,
  deltaBps,
  markE18: e18(mark),
})

describe('expiry candidates', () => {
  it('lists every future expiry once, nearest first, with its tenor and whether it is in the window', () => {
    const c = expiryChoice([h(71), h(23), h(47), h(47), h(-1), h(24 * 9)], NOW, p)
    expect(c.candidates).toEqual([
      { expirySec: h(23), tenorHours: 23, inWindow: false },
      { expirySec: h(47), tenorHours: 47, inWindow: true },
      { expirySec: h(71), tenorHours: 71, inWindow: true },
      { expirySec: h(216), tenorHours: 216, inWindow: false },
    ])
    expect(c.chosen).toBe(h(47))
    expect(expiryChoice([h(23)], NOW, p).chosen).toBeUndefined()
    expect(expiryChoice([h(40.5)], NOW, p).candidates[0]?.tenorHours).toBe(40.5)
  })

  it('becomes facts with ISO times and the window', () => {
    const f = expiryFacts(expiryChoice([h(23), h(47)], NOW, p), p)
    expect(f).toEqual({
      candidates: [
        { expiry: '2026-11-24T08:00:00.000Z', tenorHours: 23, inWindow: false },
        { expiry: '2026-11-25T08:00:00.000Z', tenorHours: 47, inWindow: true },
      ],
      chosen: '2026-11-25T08:00:00.000Z',
      minTenorHours: 40,
      maxTenorDays: 8,
    })
  })
})

describe('strike candidates', () => {
  it('keeps every option of the side with why it was excluded, and the chosen one', () => {
    const quotes = [
      q(2900, 'P', -3500),
      q(2700, 'P', -1800),
      q(2800, 'P', -2200),
      q(2600, 'P', -900, 0),
      q(3300, 'C', 2000),
    ]
    const c = strikeChoice(quotes, 'put', p, 0n, { tenorMs: 47 * 3_600_000, indexE18: e18(3000) })
    expect(c.chosen?.instrument).toBe('ETH-X-2700-P') // 0.18 and 0.22 tie: the lower strike
    expect(c.candidates.map((s) => [s.quote.instrument, s.distanceBps, s.excluded])).toEqual([
      ['ETH-X-2600-P', 1100, 'no_mark'],
      ['ETH-X-2700-P', 200, undefined],
      ['ETH-X-2800-P', 200, undefined],
      ['ETH-X-2900-P', 1500, 'outside_delta_tolerance'],
    ])
    // 10 USD on a 2700 strike for 47 h: 10 / 2700 × 8760 / 47 = 69.03 %
    expect(c.candidates[1]?.yieldBps).toBe(6903n)
  })

  it("a call's strikes below the cost basis are excluded; near the target but below it, the reason says so", () => {
    const calls = [q(3200, 'C', 2900), q(3300, 'C', 2100), q(3400, 'C', 1500)]
    const c = strikeChoice(calls, 'call', p, e18(3350), { tenorMs: 47 * 3_600_000, indexE18: e18(3000) })
    expect(c.chosen?.instrument).toBe('ETH-X-3400-C')
    expect(c.candidates.map((s) => s.excluded)).toEqual(['below_cost_basis', 'below_cost_basis', undefined])
    const none = strikeChoice(calls, 'call', p, e18(3500))
    expect(none.chosen).toBeUndefined()
    expect(noStrikeReason(none, 'call', p)).toBe('index_below_cost_basis')
    expect(noStrikeReason(strikeChoice([q(3300, 'C', 9000)], 'call', p), 'call', p)).toBe('no_strike_within_tolerance')
    expect(noStrikeReason(strikeChoice([], 'put', p), 'put', p)).toBe('no_strike_within_tolerance')
  })

  it('become facts with decimal strings, the target and the floor', () => {
    const calls = [q(3300, 'C', 2100, 12.5), q(3400, 'C', 1500)]
    const c = strikeChoice(calls, 'call', p, e18(3350), { tenorMs: 47 * 3_600_000, indexE18: e18(3000) })
    expect(strikeFacts(c, 'call', p, e18(3350))).toEqual({
      side: 'call',
      targetDeltaBps: 2000,
      toleranceBps: 700,
      minStrike: '3350',
      candidates: [
        {
          instrument: 'ETH-X-3300-C',
          strike: '3300',
          deltaBps: 2100,
          mark: '12.5',
          annualisedYieldBps: 7765,
          excluded: 'below_cost_basis',
        },
        {
          instrument: 'ETH-X-3400-C',
          strike: '3400',
          deltaBps: 1500,
          mark: '10',
          annualisedYieldBps: 6212,
          excluded: null,
        },
      ],
      chosen: 'ETH-X-3400-C',
    })
  })
})

describe('a bound on what a decision stores', () => {
  it(`keeps the ${MAX_CANDIDATES} strikes nearest the target delta, still by strike`, () => {
    const many = Array.from({ length: 100 }, (_, i) => q(2000 + i * 10, 'P', -(i * 100)))
    const f = strikeFacts(strikeChoice(many, 'put', p), 'put', p)
    expect(f.candidates).toHaveLength(MAX_CANDIDATES)
    // delta 0.20 is the 21st strike: the kept ones are those within 20 steps of it
    expect(f.candidates[0]?.strike).toBe('2000')
    expect(f.candidates.at(-1)?.strike).toBe('2390')
    expect(f.chosen).toBe('ETH-X-2200-P')
  })
})

describe('decision messages', () => {
  const quotes = [q(2700, 'P', -1800, 27), q(2800, 'P', -2200), q(2900, 'P', -3500)]
  const strikes = strikeFacts(
    strikeChoice(quotes, 'put', p, 0n, { tenorMs: 7 * 86_400_000, indexE18: e18(3000) }),
    'put',
    p,
  )
  const expiries = expiryFacts(expiryChoice([h(23), h(47), h(71)], NOW, p), p)

  it('explain a choice with its candidates', () => {
    expect(decisionMessage('expiry_chosen', 'nearest_expiry_in_window', { expiries })).toBe(
      'Expiry 2026-11-25 08:00 UTC chosen (47 h away): the nearest of 3 expiries at least 40 h and at most 8 days away.',
    )
    expect(decisionMessage('strike_chosen', 'nearest_target_delta', { strikes })).toBe(
      'Put strike 2700 chosen (ETH-X-2700-P): delta 0.18, the nearest to the 0.2 target among 3 strikes; ' +
        'the mark yields 52.14 % a year.',
    )
  })

  it('explain waits and skips', () => {
    expect(decisionMessage('waiting', 'yield_below_floor', { yield: yieldFacts('ETH-X-2700-P', 312n, p) })).toBe(
      'Waiting: ETH-X-2700-P yields 3.12 % a year, below the 5 % floor.',
    )
    expect(decisionMessage('waiting', 'no_expiry_in_range', { expiries })).toBe(
      'Waiting: none of the 3 expiries is between 40 h and 8 days away.',
    )
    expect(decisionMessage('waiting', 'no_strike_within_tolerance', { strikes })).toBe(
      'Waiting: none of the 3 put strikes has a delta within 0.07 of the 0.2 target.',
    )
    expect(decisionMessage('skipped', 'deadline_passed', {})).toBe(
      'Skipped: past the 20:00 UTC deadline; the next leg waits for tomorrow.',
    )
    expect(decisionMessage('skipped', 'refused', { detail: 'selling puts on ETH is paused' })).toBe(
      'Skipped: selling puts on ETH is paused; retried in a minute.',
    )
    expect(
      decisionMessage('leg_opened', 'holding_cash', { leg: { side: 'put', amount: '5000', currency: 'USDC' } }),
    ).toBe('Opened a put with 5000 USDC: the subaccount holds cash (a cash-secured put).')
  })

  it('explain conversions', () => {
    const conversion = { direction: 'to_underlying', trigger: 'pre_expiry' } as const
    expect(decisionMessage('conversion', 'in_the_money_before_expiry', { conversion })).toBe(
      'Converting USDC to the underlying before expiry: the leg is in the money at the index.',
    )
    expect(
      decisionMessage('conversion', 'conversion_done', {
        conversion: { ...conversion, sold: '4672 USDC', bought: '1.69 ETH', costBasis: '2764.5' },
      }),
    ).toBe('Conversion done: sold 4672 USDC for 1.69 ETH; cost basis 2764.5.')
  })

  it('formats rates and amounts without floating point', () => {
    expect(bpsPercent(5214)).toBe('52.14 %')
    expect(bpsPercent(500)).toBe('5 %')
    expect(bpsPercent(5)).toBe('0.05 %')
    expect(bpsPercent(-30)).toBe('-0.3 %')
    expect(e18Decimal(2700n * E18)).toBe('2700')
    expect(e18Decimal(E18 / 4n)).toBe('0.25')
    expect(e18Decimal(-E18 / 2n)).toBe('-0.5')
  })
})
