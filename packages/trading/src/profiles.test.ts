import { MAKER_WINDOW_MS } from '@wh/config'
import { toBaseUnits, UNDERLYINGS } from '@wh/core'
import { describe, expect, it } from 'vitest'
import { TRADING_PROFILES, tradingProfile, UnknownTradingProfileError } from './profiles'

describe('trading profiles', () => {
  it('finds a profile by name and refuses unknown names, prototype keys included', () => {
    expect(tradingProfile('balanced').name).toBe('balanced')
    expect(() => tradingProfile('yolo')).toThrow(UnknownTradingProfileError)
    expect(() => tradingProfile('toString')).toThrow(UnknownTradingProfileError)
  })

  it('every profile is consistent: deltas in (0, 0.5), sizes on their step, the spec maker window', () => {
    for (const p of Object.values(TRADING_PROFILES)) {
      for (const d of [p.putTargetDeltaBps, p.callTargetDeltaBps]) {
        expect(d).toBeGreaterThan(0)
        expect(d).toBeLessThan(5000)
      }
      expect(p.makerWindowMs).toBe(MAKER_WINDOW_MS)
      expect(p.repriceEveryMs).toBeLessThan(p.makerWindowMs)
      expect(p.minTenorHours).toBeLessThan(p.maxTenorDays * 24)
      for (const a of UNDERLYINGS) {
        const s = p.sizes[a]
        const units = (x: string) => toBaseUnits(x, 18)
        expect(units(s.min) % units(s.step)).toBe(0n)
        expect(units(s.max) % units(s.step)).toBe(0n)
        expect(units(s.min) <= units(s.max)).toBe(true)
      }
    }
  })
})
