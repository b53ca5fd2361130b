/**
 * Per-wheel settings (docs/trading.md "Wheel settings"): how a wheel's legs pick their strike (by
 * target |delta| or by distance from the index) and their expiry (the tenor window), and what the
 * wheel does after an expiry. Each is stored on the wheel row, NULL meaning "the active profile's
 * value"; a figure the user sets must lie inside the profile's `wheelSettingBounds`. The rules here
 * are pure; PATCH /wheels/{id} stores them with `updateWheelSettings` (wheel.ts, through wheel-store.ts).
 */
import { AppError, BusinessRuleError } from '@wh/core'
import type { OptionQuote } from './placing'
import type { SettingBound, TradingProfile } from './profiles'

const BPS = 10_000n

export const STRIKE_BY = ['delta', 'otm'] as const
export type StrikeBy = (typeof STRIKE_BY)[number]
/** roll: the runner opens the next leg after an expiry (today's wheel); settle: the wheel stops after it */
export const AT_EXPIRY = ['roll', 'settle'] as const
export type AtExpiry = (typeof AT_EXPIRY)[number]

/** A wheel's settings in effect: every figure known (the wheel's own, else the profile's). */
export interface WheelSettings {
  readonly strikeBy: StrikeBy
  readonly putTargetDeltaBps: number
  readonly callTargetDeltaBps: number
  readonly otmBps: number
  readonly minTenorHours: number
  readonly maxTenorDays: number
  readonly atExpiry: AtExpiry
}

/** What a request may set: a figure, null for "back to the profile's", or absent for "unchanged". */
export type WheelSettingsInput = { readonly [K in keyof WheelSettings]?: WheelSettings[K] | null }

/** The wheel row's columns (NULL = the profile's value). */
export interface StoredWheelSettings {
  strike_by: string | null
  put_target_delta_bps: number | null
  call_target_delta_bps: number | null
  otm_bps: number | null
  min_tenor_hours: number | null
  max_tenor_days: number | null
  at_expiry: string | null
}

const COLUMN: Readonly<Record<keyof WheelSettings, keyof StoredWheelSettings>> = {
  strikeBy: 'strike_by',
  putTargetDeltaBps: 'put_target_delta_bps',
  callTargetDeltaBps: 'call_target_delta_bps',
  otmBps: 'otm_bps',
  minTenorHours: 'min_tenor_hours',
  maxTenorDays: 'max_tenor_days',
  atExpiry: 'at_expiry',
}

export class SettingOutOfBoundsError extends BusinessRuleError {
  constructor(setting: string, bound: SettingBound, value: number) {
    super(
      'SETTING_OUT_OF_BOUNDS',
      `${setting} must be between ${bound.min} and ${bound.max} under this trading profile (got ${value})`,
      { setting, min: bound.min, max: bound.max, value },
    )
  }
}

/** The bound of each numeric setting under profile `p`. */
export function settingBounds(p: TradingProfile): Readonly<Record<string, SettingBound>> {
  const b = p.wheelSettingBounds
  return {
    putTargetDeltaBps: b.targetDeltaBps,
    callTargetDeltaBps: b.targetDeltaBps,
    otmBps: b.otmBps,
    minTenorHours: b.minTenorHours,
    maxTenorDays: b.maxTenorDays,
  }
}

/** The profile's values: what a wheel without settings of its own runs with. */
export function profileWheelSettings(p: TradingProfile): WheelSettings {
  return {
    strikeBy: 'delta',
    putTargetDeltaBps: p.putTargetDeltaBps,
    callTargetDeltaBps: p.callTargetDeltaBps,
    otmBps: p.wheelSettingBounds.defaultOtmBps,
    minTenorHours: p.minTenorHours,
    maxTenorDays: p.maxTenorDays,
    atExpiry: 'roll',
  }
}

const clamp = (v: number, b: SettingBound) => Math.min(b.max, Math.max(b.min, v))

/**
 * The settings in effect from the stored columns: the wheel's figure, else the profile's. A stored
 * figure outside the bounds (the profile changed since it was set) is brought to the nearest bound.
 */
export function resolveWheelSettings(stored: StoredWheelSettings | undefined, p: TradingProfile): WheelSettings {
  const d = profileWheelSettings(p)
  if (!stored) return d
  const bounds = settingBounds(p)
  const num = (k: 'putTargetDeltaBps' | 'callTargetDeltaBps' | 'otmBps' | 'minTenorHours' | 'maxTenorDays') => {
    const v = stored[COLUMN[k]] as number | null
    return v === null ? d[k] : clamp(v, bounds[k] as SettingBound)
  }
  const maxTenorDays = num('maxTenorDays')
  return {
    strikeBy: stored.strike_by === 'otm' ? 'otm' : stored.strike_by === 'delta' ? 'delta' : d.strikeBy,
    putTargetDeltaBps: num('putTargetDeltaBps'),
    callTargetDeltaBps: num('callTargetDeltaBps'),
    otmBps: num('otmBps'),
    minTenorHours: Math.min(num('minTenorHours'), maxTenorDays * 24),
    maxTenorDays,
    atExpiry: stored.at_expiry === 'settle' ? 'settle' : stored.at_expiry === 'roll' ? 'roll' : d.atExpiry,
  }
}

/**
 * The stored columns after applying `input` to `current`: each figure checked against the
 * profile's bounds (422 SETTING_OUT_OF_BOUNDS naming the setting and the bound). A profile's bounds
 * keep every tenor window they allow the right way up (the largest minimum in hours is at most the
 * smallest maximum in days; profiles.test and wheel-settings.test check it).
 */
export function applyWheelSettings(
  current: StoredWheelSettings | undefined,
  input: WheelSettingsInput,
  p: TradingProfile,
): StoredWheelSettings {
  const next: StoredWheelSettings = { ...(current ?? emptyStoredSettings()) }
  const bounds = settingBounds(p)
  for (const key of Object.keys(COLUMN) as (keyof WheelSettings)[]) {
    const v = input[key]
    if (v === undefined) continue
    const bound = bounds[key]
    if (typeof v === 'number' && bound && (!Number.isInteger(v) || v < bound.min || v > bound.max))
      throw new SettingOutOfBoundsError(key, bound, v)
    ;(next as unknown as Record<string, unknown>)[COLUMN[key]] = v
  }
  return next
}

export function emptyStoredSettings(): StoredWheelSettings {
  return {
    strike_by: null,
    put_target_delta_bps: null,
    call_target_delta_bps: null,
    otm_bps: null,
    min_tenor_hours: null,
    max_tenor_days: null,
    at_expiry: null,
  }
}

/**
 * Among one expiry's options of the side, the out-of-the-money strike whose distance from the
 * index (basis points of the index) is nearest `otmBps`, within `toleranceBps` of it; a call's
 * strike is never below `minStrikeE18` (the wheel's cost basis). Ties go further out of the money.
 *
 * @example index 3000, otmBps 1000: a put struck near 2700, a call near 3300
 */
export function chooseStrikeByOtm(
  quotes: readonly OptionQuote[],
  side: 'put' | 'call',
  indexE18: bigint,
  otmBps: number,
  toleranceBps: number,
  minStrikeE18 = 0n,
): OptionQuote | undefined {
  if (indexE18 <= 0n) return undefined
  const type = side === 'put' ? 'P' : 'C'
  let best: OptionQuote | undefined
  let bestDistance: bigint | undefined
  for (const q of quotes) {
    if (q.type !== type || q.markE18 <= 0n) continue
    if (side === 'call' && q.strikeE18 < minStrikeE18) continue
    const away = side === 'put' ? indexE18 - q.strikeE18 : q.strikeE18 - indexE18
    if (away <= 0n) continue // at or in the money
    // |away / index − otm| in e18-scaled bps, compared exactly (no floats)
    const diff = away * BPS - BigInt(otmBps) * indexE18
    const distance = diff < 0n ? -diff : diff
    if (distance > BigInt(toleranceBps) * indexE18) continue
    const furtherOut =
      best !== undefined && (side === 'put' ? q.strikeE18 < best.strikeE18 : q.strikeE18 > best.strikeE18)
    if (bestDistance === undefined || distance < bestDistance || (distance === bestDistance && furtherOut)) {
      best = q
      bestDistance = distance
    }
  }
  return best
}

/** The delta figures `chooseStrike` and the tenor window `chooseExpiry` read, from a wheel's settings. */
export function selectionProfile(p: TradingProfile, s: WheelSettings): TradingProfile {
  return {
    ...p,
    putTargetDeltaBps: s.putTargetDeltaBps,
    callTargetDeltaBps: s.callTargetDeltaBps,
    minTenorHours: s.minTenorHours,
    maxTenorDays: s.maxTenorDays,
  }
}

/** What a leg records of the settings it was chosen with (positions.leg_settings). */
export function legSettingsOf(side: 'put' | 'call', s: WheelSettings): Record<string, unknown> {
  return {
    strikeBy: s.strikeBy,
    ...(s.strikeBy === 'delta'
      ? { targetDeltaBps: side === 'put' ? s.putTargetDeltaBps : s.callTargetDeltaBps }
      : { otmBps: s.otmBps }),
    minTenorHours: s.minTenorHours,
    maxTenorDays: s.maxTenorDays,
  }
}

/** SQL's view of the stored columns, for a select list. */
export const WHEEL_SETTING_COLUMNS = Object.values(COLUMN)

export class SettingsNotForLegError extends AppError {
  constructor() {
    super({
      code: 'SETTINGS_ONLY_FOR_WHEEL',
      statusCode: 400,
      message: 'settings are given only when starting a wheel (side "wheel")',
    })
  }
}
