import type { TradingConfigResponse, WheelSettings } from '@wh/client'
import { describe, expect, it } from 'vitest'
import { bpsToPercent, daysToHours, hoursToDays, percentToBps, sumDecimals } from './format'
import { changedSettings, fieldsOf, settingsOf } from './wheel-form'

// the balanced profile's bounds (docs/trading.md "Wheel settings")
const bounds: TradingConfigResponse['profile']['wheelSettingBounds'] = {
  targetDeltaBps: { min: 500, max: 3500 },
  otmBps: { min: 200, max: 2500 },
  minTenorHours: { min: 20, max: 80 },
  maxTenorDays: { min: 4, max: 16 },
  defaultOtmBps: 700,
  otmToleranceBps: 500,
}
const balanced: WheelSettings = {
  strikeBy: 'delta',
  putTargetDeltaBps: 2000,
  callTargetDeltaBps: 2000,
  otmBps: 700,
  minTenorHours: 40,
  maxTenorDays: 8,
  atExpiry: 'roll',
}

describe('wheel settings in percent and days', () => {
  it('converts percent to basis points and days to hours, both ways, without drift', () => {
    expect(percentToBps('20')).toBe(2000)
    expect(percentToBps('7.5')).toBe(750)
    expect(percentToBps('0.05')).toBe(5)
    expect([percentToBps('7.555'), percentToBps('-1'), percentToBps('abc')]).toEqual([undefined, undefined, undefined])
    expect(bpsToPercent(750)).toBe('7.5')
    expect(bpsToPercent(2000)).toBe('20')
    for (let hours = 1; hours <= 24 * 30; hours++) expect(daysToHours(hoursToDays(hours)), String(hours)).toBe(hours)
  })

  it('an untouched form is the settings it showed: nothing to change', () => {
    const s = settingsOf(fieldsOf(balanced), bounds)
    expect(s).toEqual({ settings: { ...balanced, otmBps: undefined } })
    if ('settings' in s) expect(changedSettings(balanced, s.settings)).toEqual({})
  })

  it('says which field is outside its bound, in the units the form uses', () => {
    const f = fieldsOf(balanced)
    expect(settingsOf({ ...f, putDeltaPct: '45' }, bounds)).toEqual({ error: "The put's delta must be 5 % to 35 %." })
    expect(settingsOf({ ...f, strikeBy: 'otm', otmPct: '30' }, bounds)).toEqual({
      error: 'The distance from the price must be 2 % to 25 %.',
    })
    expect(settingsOf({ ...f, minDays: '4' }, bounds)).toEqual({
      error: 'The shortest expiry must be 0.83 to 3.33 days.',
    })
    expect(settingsOf({ ...f, maxDays: '4.5' }, bounds)).toEqual({
      error: 'The longest expiry must be 4 to 16 days (whole days).',
    })
  })

  it('sends only what changed', () => {
    const s = settingsOf({ ...fieldsOf(balanced), putDeltaPct: '15', atExpiry: 'settle' }, bounds)
    if (!('settings' in s)) throw new Error(s.error)
    expect(changedSettings(balanced, s.settings)).toEqual({ putTargetDeltaBps: 1500, atExpiry: 'settle' })
  })

  it('sums decimal strings exactly', () => {
    expect(sumDecimals(['1.5', '-0.25', '0.000001'])).toBe('1.250001')
    expect(sumDecimals([])).toBe('0')
    expect(sumDecimals(['0.1', '0.2'])).toBe('0.3')
  })
})
