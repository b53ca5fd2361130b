import { fromE18 } from '@wh/exchange'
import { describe, expect, it } from 'vitest'
import { E18, optionFeeSchedule, optionSaleFees } from './fees'

describe('option sale fees (bigint)', () => {
  it('maker fee is the rate on the notional, platform fee the rate on the premium', () => {
    const f = optionSaleFees({ indexE18: 3000n * E18, premiumE18: 50n * E18, amountE18: E18, platformFeeRate: '0.1' })
    expect(fromE18(f.exchangeFeeMakerE18)).toBe('0.9')
    expect(fromE18(f.exchangeFeeTakerE18)).toBe('1.7')
    expect(fromE18(f.platformFeeE18)).toBe('5')
    expect(fromE18(f.netPremiumMakerE18)).toBe('44.1')
  })

  it('the rate part is capped at 12.5 % of the option value; the taker base fee is not', () => {
    const f = optionSaleFees({
      indexE18: 3000n * E18,
      premiumE18: (4n * E18) / 10n,
      amountE18: E18,
      platformFeeRate: '0',
    })
    expect(fromE18(f.exchangeFeeMakerE18)).toBe('0.05')
    expect(fromE18(f.exchangeFeeTakerE18)).toBe('0.55')
  })

  it('publishes Derive’s schedule as fractions', () => {
    expect(optionFeeSchedule()).toEqual({
      makerRate: '0.0003',
      takerRate: '0.0004',
      baseFeeUsd: '0.5',
      capRateOfOptionValue: '0.125',
    })
  })
})
