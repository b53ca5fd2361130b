import type { Ticker } from '@wh/exchange'
import { describe, expect, it } from 'vitest'
import { markIvE18, selectAtmOptions } from './instruments'

const E18 = 10n ** 18n
const DAY = 86_400
const now = Date.UTC(2026, 0, 5, 12)
const exp = (days: number) => Date.UTC(2026, 0, 5, 8) / 1000 + days * DAY
const opt = (expiry: number, strike: number, type: 'C' | 'P', active = true) => ({
  instrument_name: `ETH-${expiry}-${strike}-${type}`,
  is_active: active,
  option_details: { expiry, strike: String(strike), option_type: type, index: 'ETH-USD', settlement_price: null },
})

describe('ATM option selection', () => {
  const list = [
    opt(exp(0), 3000, 'C'), // expired already (08:00 today)
    ...[2900, 3000, 3100].flatMap((k) => [opt(exp(1), k, 'C'), opt(exp(1), k, 'P')]),
    ...[2900, 3000, 3100].flatMap((k) => [opt(exp(2), k, 'C'), opt(exp(2), k, 'P')]),
    ...[3000].flatMap((k) => [opt(exp(3), k, 'C'), opt(exp(3), k, 'P')]),
    { instrument_name: 'ETH-PERP', is_active: true, option_details: null },
  ]

  it('takes the call and put nearest the index for the nearest expiries', () => {
    expect(selectAtmOptions(list, 3040n * E18, now)).toEqual([
      `ETH-${exp(1)}-3000-C`,
      `ETH-${exp(1)}-3000-P`,
      `ETH-${exp(2)}-3000-C`,
      `ETH-${exp(2)}-3000-P`,
    ])
    expect(selectAtmOptions(list, 3060n * E18, now, { expiries: 1 })).toEqual([
      `ETH-${exp(1)}-3100-C`,
      `ETH-${exp(1)}-3100-P`,
    ])
  })

  it('skips an expiry closer than the minimum time ahead, and breaks a tie to the lower strike', () => {
    const soon = now + 30 * 60_000
    const l = [opt(soon / 1000, 3000, 'C'), ...[2900, 3100].map((k) => opt(exp(1), k, 'C'))]
    expect(selectAtmOptions(l, 3000n * E18, now, { expiries: 1 })).toEqual([`ETH-${exp(1)}-2900-C`])
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
