import { describe, expect, it } from 'vitest'
import { selectAtmOptions } from './instruments'

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
