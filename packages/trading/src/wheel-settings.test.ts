import { describe, expect, it } from 'vitest'
import { chooseExpiry, chooseStrike, type OptionQuote } from './placing'
import { TRADING_PROFILES, tradingProfile } from './profiles'
import {
  applyWheelSettings,
  chooseStrikeByOtm,
  emptyStoredSettings,
  legSettingsOf,
  profileWheelSettings,
  resolveWheelSettings,
  SettingOutOfBoundsError,
  selectionProfile,
} from './wheel-settings'

const p = tradingProfile('balanced')
const e18 = (n: number) => BigInt(Math.round(n * 1e6)) * 10n ** 12n
const q = (strike: number, type: 'P' | 'C', deltaBps = 0, mark = 10): OptionQuote => ({
  instrument: `ETH-X-${strike}-${type}`,
  expirySec: 1,
  strikeE18: e18(strike),
  type,
  deltaBps,
  markE18: e18(mark),
})

function outOfBounds(f: () => unknown): Record<string, unknown> {
  try {
    f()
  } catch (e) {
    expect(e).toBeInstanceOf(SettingOutOfBoundsError)
    expect((e as SettingOutOfBoundsError).code).toBe('SETTING_OUT_OF_BOUNDS')
    expect((e as SettingOutOfBoundsError).statusCode).toBe(422)
    return (e as SettingOutOfBoundsError).details as Record<string, unknown>
  }
  throw new Error('no SETTING_OUT_OF_BOUNDS')
}

describe('wheel settings', () => {
  it("defaults to the profile's values; stored figures win; a figure now outside the bounds is clamped", () => {
    expect(resolveWheelSettings(undefined, p)).toEqual({
      strikeBy: 'delta',
      putTargetDeltaBps: 2000,
      callTargetDeltaBps: 2000,
      otmBps: 700,
      minTenorHours: 40,
      maxTenorDays: 8,
      atExpiry: 'roll',
    })
    expect(resolveWheelSettings(emptyStoredSettings(), p)).toEqual(profileWheelSettings(p))
    const stored = { ...emptyStoredSettings(), strike_by: 'otm', otm_bps: 900, at_expiry: 'settle' }
    expect(resolveWheelSettings(stored, p)).toMatchObject({ strikeBy: 'otm', otmBps: 900, atExpiry: 'settle' })
    // set under a wider profile: brought to the nearest bound of this one
    const wide = { ...emptyStoredSettings(), put_target_delta_bps: 4000, min_tenor_hours: 4 }
    expect(resolveWheelSettings(wide, p)).toMatchObject({ putTargetDeltaBps: 3500, minTenorHours: 20 })
  })

  it('every profile: its own values lie inside its bounds, and the bounds are sane', () => {
    for (const profile of Object.values(TRADING_PROFILES)) {
      const b = profile.wheelSettingBounds
      const inside = (v: number, r: { min: number; max: number }) => v >= r.min && v <= r.max
      expect(inside(profile.putTargetDeltaBps, b.targetDeltaBps)).toBe(true)
      expect(inside(profile.callTargetDeltaBps, b.targetDeltaBps)).toBe(true)
      expect(inside(profile.minTenorHours, b.minTenorHours)).toBe(true)
      expect(inside(profile.maxTenorDays, b.maxTenorDays)).toBe(true)
      expect(inside(b.defaultOtmBps, b.otmBps)).toBe(true)
      expect(b.targetDeltaBps.max).toBeLessThan(5000)
      expect(b.minTenorHours.max).toBeLessThanOrEqual(b.maxTenorDays.min * 24)
    }
  })

  it('refuses a figure outside the bounds, naming the setting and the bound', () => {
    expect(outOfBounds(() => applyWheelSettings(undefined, { putTargetDeltaBps: 4500 }, p))).toEqual({
      setting: 'putTargetDeltaBps',
      min: 500,
      max: 3500,
      value: 4500,
    })
    expect(outOfBounds(() => applyWheelSettings(undefined, { otmBps: 50 }, p))).toMatchObject({
      setting: 'otmBps',
      min: 200,
      max: 2500,
    })
    expect(outOfBounds(() => applyWheelSettings(undefined, { maxTenorDays: 30 }, p))).toMatchObject({
      setting: 'maxTenorDays',
      max: 16,
    })
  })

  it('applies a change over what is stored; null goes back to the profile', () => {
    const first = applyWheelSettings(undefined, { strikeBy: 'otm', otmBps: 1000, minTenorHours: 24 }, p)
    expect(first).toMatchObject({ strike_by: 'otm', otm_bps: 1000, min_tenor_hours: 24, at_expiry: null })
    const second = applyWheelSettings(first, { otmBps: null, atExpiry: 'settle' }, p)
    expect(second).toMatchObject({ strike_by: 'otm', otm_bps: null, min_tenor_hours: 24, at_expiry: 'settle' })
    expect(resolveWheelSettings(second, p).otmBps).toBe(700)
  })

  it('the tenor window and target delta of a wheel drive chooseExpiry and chooseStrike', () => {
    const now = Date.UTC(2026, 10, 23, 9)
    const h = (hours: number) => now / 1000 + hours * 3600
    const s = resolveWheelSettings(applyWheelSettings(undefined, { minTenorHours: 20, putTargetDeltaBps: 3000 }, p), p)
    const rule = selectionProfile(p, s)
    expect(chooseExpiry([h(23), h(47)], now, p)).toBe(h(47))
    expect(chooseExpiry([h(23), h(47)], now, rule)).toBe(h(23))
    const puts = [q(2900, 'P', -3100), q(2700, 'P', -2000)]
    expect(chooseStrike(puts, 'put', p)?.instrument).toBe('ETH-X-2700-P')
    expect(chooseStrike(puts, 'put', rule)?.instrument).toBe('ETH-X-2900-P')
    expect(legSettingsOf('put', s)).toEqual({
      strikeBy: 'delta',
      targetDeltaBps: 3000,
      minTenorHours: 20,
      maxTenorDays: 8,
    })
  })

  it('picks by distance from the index: out of the money only, nearest the target, within tolerance', () => {
    const index = e18(3000)
    const puts = [q(3100, 'P'), q(3000, 'P'), q(2800, 'P'), q(2700, 'P'), q(2600, 'P')]
    // 10 % below 3000 is 2700
    expect(chooseStrikeByOtm(puts, 'put', index, 1000, 500)?.instrument).toBe('ETH-X-2700-P')
    // 5 % is 2850: 2800 (6.67 %) is nearest; 3000 is at the money, 3100 in it
    expect(chooseStrikeByOtm(puts, 'put', index, 500, 500)?.instrument).toBe('ETH-X-2800-P')
    // 1 %: 2800 is 5.67 % away from the target, outside a 5 % tolerance
    expect(chooseStrikeByOtm(puts, 'put', index, 100, 500)).toBeUndefined()
    const calls = [q(2900, 'C'), q(3150, 'C'), q(3300, 'C'), q(3450, 'C')]
    expect(chooseStrikeByOtm(calls, 'call', index, 1000, 500)?.instrument).toBe('ETH-X-3300-C')
    // a call never below the cost basis
    expect(chooseStrikeByOtm(calls, 'call', index, 1000, 500, e18(3400))?.instrument).toBe('ETH-X-3450-C')
    // 3150 (5 %) and 3450 (15 %) are both 5 % from a 10 % target: the tie goes further out
    expect(chooseStrikeByOtm([q(3150, 'C'), q(3450, 'C')], 'call', index, 1000, 500)?.instrument).toBe('ETH-X-3450-C')
    // no mark, no index: nothing
    expect(chooseStrikeByOtm([q(2700, 'P', 0, 0)], 'put', index, 1000, 500)).toBeUndefined()
    expect(chooseStrikeByOtm(puts, 'put', 0n, 1000, 500)).toBeUndefined()
  })
})
