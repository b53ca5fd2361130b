import type { Ticker } from '@wh/exchange'
import { describe, expect, it } from 'vitest'
import {
  annualisedYieldBps,
  askPrice,
  chooseExpiry,
  chooseStrike,
  crossFloor,
  E18,
  markIvE18,
  type OptionQuote,
  platformFee,
  premiumUsdc,
  roundUpToTick,
  sizeFor,
} from './placing'
import { tradingProfile } from './profiles'

const p = tradingProfile('balanced')
const e18 = (n: number) => BigInt(Math.round(n * 1e6)) * 10n ** 12n
const q = (strike: number, type: 'P' | 'C', deltaBps: number, mark = 10): OptionQuote => ({
  instrument: `ETH-X-${strike}-${type}`,
  expirySec: 1,
  strikeE18: e18(strike),
  type,
  deltaBps,
  markE18: e18(mark),
})

describe('placing decisions', () => {
  it('picks the nearest expiry inside the tenor window, or none', () => {
    const now = Date.UTC(2026, 10, 23, 9) // Monday 09:00
    const h = (hours: number) => now / 1000 + hours * 3600
    expect(chooseExpiry([h(23), h(47), h(71)], now, p)).toBe(h(47)) // min 40 h
    expect(chooseExpiry([h(23), h(24 * 9)], now, p)).toBeUndefined() // max 8 days
    expect(chooseExpiry([], now, p)).toBeUndefined()
  })

  it('picks the strike nearest the target delta, within tolerance, ties further out of the money', () => {
    const puts = [q(2900, 'P', -3500), q(2800, 'P', -2200), q(2700, 'P', -1800), q(2600, 'P', -900)]
    expect(chooseStrike(puts, 'put', p)?.instrument).toBe('ETH-X-2700-P') // 0.18 and 0.22 tie → lower strike
    expect(chooseStrike([q(3500, 'P', -9000)], 'put', p)).toBeUndefined() // outside the tolerance
    const calls = [q(3300, 'C', 2100), q(3400, 'C', 1500), q(3200, 'C', 2900)]
    expect(chooseStrike(calls, 'call', p)?.instrument).toBe('ETH-X-3300-C')
    // never below the cost basis
    expect(chooseStrike(calls, 'call', p, e18(3350))?.instrument).toBe('ETH-X-3400-C')
    // calls are not puts, and a zero mark is not sellable
    expect(chooseStrike([q(2700, 'P', -2000, 0)], 'put', p)).toBeUndefined()
    expect(chooseStrike(calls, 'put', p)).toBeUndefined()
  })

  it('sizes a put by collateral / strike and a call one for one, floored to the step', () => {
    // 1000 USDC at a 2700 strike = 0.370370… → 0.37 with a 0.01 step
    expect(sizeFor('put', 1_000_000_000n, 6, e18(2700), e18(0.01))).toBe(e18(0.37))
    expect(sizeFor('call', e18(1.2345), 18, e18(3300), e18(0.1))).toBe(e18(1.2))
    expect(sizeFor('put', 1_000_000n, 6, e18(2700), e18(0.01))).toBe(0n)
  })

  it('asks above the mark at the start and steps down to the mark at the end, rounded up to the tick', () => {
    const mark = e18(10)
    const tick = e18(0.1)
    expect(askPrice(mark, 0, p, tick)).toBe(e18(10.2)) // +200 bps
    expect(askPrice(mark, p.makerWindowMs / 2, p, tick)).toBe(e18(10.1))
    expect(askPrice(mark, p.makerWindowMs, p, tick)).toBe(mark)
    expect(askPrice(mark, p.makerWindowMs * 3, p, tick)).toBe(mark)
    // monotone non-increasing over the window
    let last = askPrice(mark, 0, p, tick)
    for (let t = 0; t <= p.makerWindowMs; t += 10_000) {
      const now = askPrice(mark, t, p, tick)
      expect(now <= last).toBe(true)
      last = now
    }
    expect(roundUpToTick(e18(10.01), tick)).toBe(e18(10.1))
    expect(roundUpToTick(e18(10.1), tick)).toBe(e18(10.1))
    expect(crossFloor(mark, p)).toBe(e18(9.5))
  })

  it('annualises a premium on its collateral', () => {
    // 27 USDC on a 2700 strike for 7 days = 1 % → 52.14 % a year
    expect(annualisedYieldBps(e18(27), e18(2700), 7 * 86_400_000)).toBe(5214n)
    expect(annualisedYieldBps(e18(27), 0n, 1)).toBe(0n)
  })

  it('takes the platform fee rounded down, and refuses a bad rate', () => {
    expect(platformFee(1_000_001n, '0.1')).toBe(100_000n)
    expect(platformFee(999n, '0.125')).toBe(124n)
    expect(platformFee(123n, '0')).toBe(0n)
    expect(() => platformFee(1n, '1.5')).toThrow()
    expect(() => platformFee(1n, '-0.1')).toThrow()
    expect(premiumUsdc(e18(0.37), e18(12.5))).toBe(4_625_000n)
    expect(E18).toBe(10n ** 18n)
  })
})

describe('the mark IV a leg records (positions.iv_e18)', () => {
  const pricing = (iv: string): Pick<Ticker, 'option_pricing'> => ({
    option_pricing: {
      iv,
      bid_iv: iv,
      ask_iv: iv,
      delta: '0.5',
      gamma: '0',
      theta: '0',
      vega: '0',
      rho: '0',
      mark_price: '1',
      forward_price: '1',
      discount_factor: '1',
    },
  })
  it('is the ticker’s mark IV in e18, digits past the 18th decimal dropped', () => {
    expect(markIvE18(pricing('0.6'))).toBe(6n * 10n ** 17n)
    expect(markIvE18(pricing('1.2345'))).toBe(12_345n * 10n ** 14n)
    expect(markIvE18(pricing('0.1234567890123456789'))).toBe(123_456_789_012_345_678n)
  })
  it('is null without option pricing or for an IV that is not a positive decimal, never an error', () => {
    expect(markIvE18({ option_pricing: null })).toBeNull()
    for (const iv of ['0', '-0.5', 'NaN', '', '1e-1']) expect(markIvE18(pricing(iv)), iv).toBeNull()
  })
})
