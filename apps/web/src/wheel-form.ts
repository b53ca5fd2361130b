/**
 * A wheel's settings as a person sets them (docs/console.md "Wheel"): strikes in percent (a target
 * |delta| of 20 %, a distance of 7.5 % from the index) and expiries in days, turned into the API's
 * basis points and hours (docs/trading.md "Wheel settings"). Pure; the form is pages/wheel-start.tsx.
 */
import type { TradingConfigResponse, WheelSettings, WheelSettingsInput } from '@wh/client'
import { bpsToPercent, daysToHours, hoursToDays, percentToBps } from './format'

export interface SettingsFields {
  strikeBy: 'delta' | 'otm'
  /** the put's target |delta|, percent */
  putDeltaPct: string
  /** the call's target |delta|, percent */
  callDeltaPct: string
  /** distance of the strike from the index, percent */
  otmPct: string
  /** the nearest expiry at least this far away, days */
  minDays: string
  /** none further, days */
  maxDays: string
  atExpiry: 'roll' | 'settle'
}

type Bounds = TradingConfigResponse['profile']['wheelSettingBounds']

/** The fields showing `s` (the profile's settings, or a wheel's). */
export function fieldsOf(s: WheelSettings): SettingsFields {
  return {
    strikeBy: s.strikeBy,
    putDeltaPct: bpsToPercent(s.putTargetDeltaBps),
    callDeltaPct: bpsToPercent(s.callTargetDeltaBps),
    otmPct: bpsToPercent(s.otmBps),
    minDays: hoursToDays(s.minTenorHours),
    maxDays: String(s.maxTenorDays),
    atExpiry: s.atExpiry,
  }
}

/** The profile's own settings, from GET /trading-config. */
export function profileSettings(c: TradingConfigResponse): WheelSettings {
  return {
    strikeBy: 'delta',
    putTargetDeltaBps: c.profile.putTargetDeltaBps,
    callTargetDeltaBps: c.profile.callTargetDeltaBps,
    otmBps: c.profile.wheelSettingBounds.defaultOtmBps,
    minTenorHours: c.profile.minTenorHours,
    maxTenorDays: c.profile.maxTenorDays,
    atExpiry: 'roll',
  }
}

/** A bound as the form shows it: "5 % to 35 %", "0.83 to 3.33 days". */
export function boundsText(b: Bounds) {
  const pct = (r: { min: number; max: number }) => `${bpsToPercent(r.min)} % to ${bpsToPercent(r.max)} %`
  return {
    delta: pct(b.targetDeltaBps),
    otm: pct(b.otmBps),
    minDays: `${hoursToDays(b.minTenorHours.min)} to ${hoursToDays(b.minTenorHours.max)} days`,
    maxDays: `${b.maxTenorDays.min} to ${b.maxTenorDays.max} days`,
  }
}

/**
 * The settings to send, or the first field a person must fix, in words. Each figure is checked
 * against the profile's bounds here too, so the form says which one before the API refuses it.
 */
export function settingsOf(f: SettingsFields, b: Bounds): { settings: WheelSettingsInput } | { error: string } {
  const within = (v: number | undefined, r: { min: number; max: number }) => v !== undefined && v >= r.min && v <= r.max
  const put = percentToBps(f.putDeltaPct)
  const call = percentToBps(f.callDeltaPct)
  const otm = percentToBps(f.otmPct)
  const minHours = daysToHours(f.minDays)
  const maxDays = /^\s*\d{1,3}\s*$/.test(f.maxDays) ? Number(f.maxDays) : undefined
  const t = boundsText(b)
  if (f.strikeBy === 'delta' && !within(put, b.targetDeltaBps)) return { error: `The put's delta must be ${t.delta}.` }
  if (f.strikeBy === 'delta' && !within(call, b.targetDeltaBps))
    return { error: `The call's delta must be ${t.delta}.` }
  if (f.strikeBy === 'otm' && !within(otm, b.otmBps)) return { error: `The distance from the price must be ${t.otm}.` }
  if (!within(minHours, b.minTenorHours)) return { error: `The shortest expiry must be ${t.minDays}.` }
  if (!within(maxDays, b.maxTenorDays)) return { error: `The longest expiry must be ${t.maxDays} (whole days).` }
  if ((minHours as number) > (maxDays as number) * 24)
    return { error: 'The shortest expiry must come before the longest.' }
  return {
    settings: {
      strikeBy: f.strikeBy,
      ...(f.strikeBy === 'delta'
        ? { putTargetDeltaBps: put as number, callTargetDeltaBps: call as number }
        : { otmBps: otm as number }),
      minTenorHours: minHours as number,
      maxTenorDays: maxDays as number,
      atExpiry: f.atExpiry,
    },
  }
}

/**
 * Only the settings that differ from `current` (a wheel's, or the profile's for a new wheel): what
 * is not sent stays the profile's and follows it (docs/trading.md "Wheel settings": NULL columns).
 */
export function changedSettings(current: WheelSettings, next: WheelSettingsInput): WheelSettingsInput {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(next)) if (v !== undefined && current[k as keyof WheelSettings] !== v) out[k] = v
  return out as WheelSettingsInput
}
