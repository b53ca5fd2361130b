/**
 * TRADING_PROFILE: the named parameter sets of the wheel (docs/trading.md "Profiles"). The
 * environment picks one by name; GET /trading-config shows it. Figures that are amounts are
 * decimal strings in the asset's unit; ratios are integer basis points; no floats.
 */
import { MAKER_WINDOW_MS } from '@wh/config'
import { AppError, type Underlying } from '@wh/core'

export interface SizeLimits {
  /** smallest order, asset units (the exchange's minimum amount or more) */
  readonly min: string
  /** order sizes are multiples of this, asset units */
  readonly step: string
  /** largest position per user on this asset, asset units */
  readonly max: string
}

/** An inclusive range a wheel setting must stay in (docs/trading.md "Wheel settings"). */
export interface SettingBound {
  readonly min: number
  readonly max: number
}

/**
 * What a user may set on a wheel under this profile (docs/trading.md "Wheel settings"), and the
 * figures of the OTM strike rule the profile itself has no value for.
 */
export interface WheelSettingBounds {
  /** |delta| of a put or a call, basis points */
  readonly targetDeltaBps: SettingBound
  /** a strike's distance from the index, basis points of the index */
  readonly otmBps: SettingBound
  readonly minTenorHours: SettingBound
  readonly maxTenorDays: SettingBound
  /** the OTM distance a wheel uses when it picks by OTM without naming one */
  readonly defaultOtmBps: number
  /** a strike whose distance from the index is further than this from the OTM target is not picked */
  readonly otmToleranceBps: number
}

export interface TradingProfile {
  readonly name: string
  readonly description: string
  /** |delta| of the put sold, basis points of delta (1500 = 0.15) */
  readonly putTargetDeltaBps: number
  /** |delta| of the call sold */
  readonly callTargetDeltaBps: number
  /** an instrument whose |delta| is further than this from the target is not picked */
  readonly deltaToleranceBps: number
  /** the nearest expiry at least this far away is picked… */
  readonly minTenorHours: number
  /** …and none further than this */
  readonly maxTenorDays: number
  readonly sizes: Readonly<Record<Underlying, SizeLimits>>
  /** below this annualised premium (on the collateral) nothing is sold that day */
  readonly minAnnualisedYieldBps: number
  /** the placing step: maker-only orders repriced within this window (spec 8.1 MAKER_WINDOW_MS) */
  readonly makerWindowMs: number
  /** how often a resting order is repriced inside the window */
  readonly repriceEveryMs: number
  /** the first ask sits this far above the mark; each reprice steps toward the mark */
  readonly makerStartAboveMarkBps: number
  /** what happens to the unfilled rest at the end of the window */
  readonly endOfWindow: 'cancel' | 'cross'
  /** crossing is allowed down to this far below the mark (else the rest is cancelled) */
  readonly maxCrossBelowMarkBps: number
  /** per-wheel settings: their bounds under this profile */
  readonly wheelSettingBounds: WheelSettingBounds
}

const sizes = (eth: SizeLimits, btc: SizeLimits) => Object.freeze({ ETH: eth, BTC: btc })

export const TRADING_PROFILES: Readonly<Record<string, TradingProfile>> = Object.freeze({
  conservative: {
    name: 'conservative',
    description: 'far out-of-the-money weeklies; never crosses the spread',
    putTargetDeltaBps: 1000,
    callTargetDeltaBps: 1000,
    deltaToleranceBps: 500,
    minTenorHours: 96,
    maxTenorDays: 10,
    sizes: sizes({ min: '0.1', step: '0.1', max: '50' }, { min: '0.01', step: '0.01', max: '2' }),
    minAnnualisedYieldBps: 300,
    makerWindowMs: MAKER_WINDOW_MS,
    repriceEveryMs: 120_000,
    makerStartAboveMarkBps: 300,
    endOfWindow: 'cancel',
    maxCrossBelowMarkBps: 0,
    wheelSettingBounds: {
      targetDeltaBps: { min: 500, max: 2000 },
      otmBps: { min: 500, max: 3000 },
      minTenorHours: { min: 48, max: 120 },
      maxTenorDays: { min: 5, max: 20 },
      defaultOtmBps: 1000,
      otmToleranceBps: 500,
    },
  },
  balanced: {
    name: 'balanced',
    description: 'the default wheel: 0.20-delta options two to eight days out',
    putTargetDeltaBps: 2000,
    callTargetDeltaBps: 2000,
    deltaToleranceBps: 700,
    minTenorHours: 40,
    maxTenorDays: 8,
    sizes: sizes({ min: '0.1', step: '0.1', max: '100' }, { min: '0.01', step: '0.01', max: '5' }),
    minAnnualisedYieldBps: 500,
    makerWindowMs: MAKER_WINDOW_MS,
    repriceEveryMs: 60_000,
    makerStartAboveMarkBps: 200,
    endOfWindow: 'cross',
    maxCrossBelowMarkBps: 500,
    wheelSettingBounds: {
      targetDeltaBps: { min: 500, max: 3500 },
      otmBps: { min: 200, max: 2500 },
      minTenorHours: { min: 20, max: 80 },
      maxTenorDays: { min: 4, max: 16 },
      defaultOtmBps: 700,
      otmToleranceBps: 500,
    },
  },
  aggressive: {
    name: 'aggressive',
    description: 'nearer the money, daily and next-day expiries; crosses what is left',
    putTargetDeltaBps: 3000,
    callTargetDeltaBps: 3000,
    deltaToleranceBps: 1000,
    minTenorHours: 16,
    maxTenorDays: 3,
    sizes: sizes({ min: '0.1', step: '0.1', max: '200' }, { min: '0.01', step: '0.01', max: '10' }),
    minAnnualisedYieldBps: 800,
    makerWindowMs: MAKER_WINDOW_MS,
    repriceEveryMs: 30_000,
    makerStartAboveMarkBps: 150,
    endOfWindow: 'cross',
    maxCrossBelowMarkBps: 800,
    wheelSettingBounds: {
      targetDeltaBps: { min: 1000, max: 4000 },
      otmBps: { min: 100, max: 1500 },
      minTenorHours: { min: 8, max: 32 },
      maxTenorDays: { min: 2, max: 6 },
      defaultOtmBps: 400,
      otmToleranceBps: 400,
    },
  },
})

export class UnknownTradingProfileError extends AppError {
  constructor(name: string) {
    super({
      code: 'UNKNOWN_TRADING_PROFILE',
      statusCode: 500,
      message: `TRADING_PROFILE "${name}" is not one of: ${Object.keys(TRADING_PROFILES).join(', ')}`,
      details: { name },
    })
  }
}

/** The profile named by TRADING_PROFILE; an unknown name fails start-up. */
export function tradingProfile(name: string): TradingProfile {
  const p = Object.hasOwn(TRADING_PROFILES, name) ? TRADING_PROFILES[name] : undefined
  if (!p) throw new UnknownTradingProfileError(name)
  return p
}
