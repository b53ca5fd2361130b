/**
 * The wheel's decision log, its pure part (docs/trading.md "Why: the decision log"): the kinds and
 * reason codes, the facts a decision carries (the candidates considered and the one chosen) as
 * JSON (prices as decimal strings, rates as integer basis points), and the one-line message a
 * person reads. The rows are written by decisions.ts only.
 */

import { fromE18 } from '@wh/exchange'
import type { ExpiryChoice, StrikeChoice, StrikeExclusion } from './placing'
import type { TradingProfile } from './profiles'

export const DECISION_KINDS = [
  'leg_opened',
  'expiry_chosen',
  'strike_chosen',
  'skipped',
  'waiting',
  'conversion',
  'stopped',
  'resumed',
] as const
export type DecisionKind = (typeof DECISION_KINDS)[number]

export const DECISION_REASONS = [
  // leg_opened
  'holding_cash',
  'holding_underlying',
  // expiry_chosen, strike_chosen
  'nearest_expiry_in_window',
  'nearest_target_delta',
  'nearest_otm_distance',
  // waiting (the placing tick)
  'no_expiry_in_range',
  'no_strike_within_tolerance',
  'index_below_cost_basis',
  'yield_below_floor',
  'side_paused',
  'subaccount_stopped',
  // waiting (the runner)
  'conversion_in_progress',
  'awaiting_conversion',
  // skipped
  'deadline_passed',
  'nothing_to_sell',
  'subaccount_missing',
  'refused',
  'window_ended',
  // conversion
  'in_the_money_before_expiry',
  'settled_in_the_money',
  'conversion_done',
  'conversion_failed',
  // stopped
  'stopped_by_user',
  'stopped_at_expiry',
  'leg_cancelled',
  // resumed
  'resumed_by_user',
] as const
export type DecisionReason = (typeof DECISION_REASONS)[number]

export interface ExpiryFacts {
  readonly candidates: readonly { expiry: string; tenorHours: number; inWindow: boolean }[]
  /** the chosen expiry (ISO time), null when none was in the window */
  readonly chosen: string | null
  readonly minTenorHours: number
  readonly maxTenorDays: number
}

export interface StrikeCandidateFacts {
  readonly instrument: string
  readonly strike: string
  /** signed, as the exchange gives it (puts negative) */
  readonly deltaBps: number
  readonly mark: string
  readonly annualisedYieldBps: number | null
  /** why it was not eligible; null when it was */
  readonly excluded: StrikeExclusion | null
}

export interface StrikeFacts {
  readonly side: 'put' | 'call'
  readonly targetDeltaBps: number
  readonly toleranceBps: number
  /** a call's floor: the wheel's cost basis (USD per unit), null for a put or without one */
  readonly minStrike: string | null
  readonly candidates: readonly StrikeCandidateFacts[]
  /** the chosen instrument, null when none qualified */
  readonly chosen: string | null
}

export interface YieldFacts {
  readonly instrument: string
  readonly annualisedYieldBps: number
  readonly floorBps: number
}

export interface LegFacts {
  readonly side: 'put' | 'call'
  /** the collateral committed, a decimal string of `currency` */
  readonly amount: string
  readonly currency: string
}

export interface ConversionFacts {
  readonly direction: 'to_underlying' | 'to_cash'
  readonly trigger: 'pre_expiry' | 'after_settlement'
  readonly sold?: string
  readonly bought?: string
  /** after a round to the underlying: the wheel's new cost basis (USD per unit) */
  readonly costBasis?: string | null
}

/** What a decision was taken on. Every part is optional: a decision carries what it looked at. */
export interface DecisionFacts {
  readonly expiries?: ExpiryFacts
  readonly strikes?: StrikeFacts
  readonly yield?: YieldFacts
  readonly leg?: LegFacts
  readonly conversion?: ConversionFacts
  /** free text from elsewhere (an error message, a conversion state), at most 500 characters */
  readonly detail?: string
}

/** A bound on what one decision stores: the nearest candidates are kept, the rest dropped. */
export const MAX_CANDIDATES = 40

/** An e18 amount as a decimal string, trailing zeros trimmed ("2700", "0.25"): @wh/exchange's fromE18. */
export function e18Decimal(v: bigint): string {
  return fromE18(v)
}

const bpsNumber = (v: bigint) => Number(v > 1_000_000_000n ? 1_000_000_000n : v)

/** The expiry part of the facts from `expiryChoice`. */
export function expiryFacts(c: ExpiryChoice, p: TradingProfile): ExpiryFacts {
  return {
    candidates: c.candidates.slice(0, MAX_CANDIDATES).map((e) => ({
      expiry: new Date(e.expirySec * 1000).toISOString(),
      tenorHours: e.tenorHours,
      inWindow: e.inWindow,
    })),
    chosen: c.chosen === undefined ? null : new Date(c.chosen * 1000).toISOString(),
    minTenorHours: p.minTenorHours,
    maxTenorDays: p.maxTenorDays,
  }
}

/** The strike part of the facts from `strikeChoice`: the candidates nearest the target delta first kept. */
export function strikeFacts(c: StrikeChoice, side: 'put' | 'call', p: TradingProfile, minStrikeE18 = 0n): StrikeFacts {
  const kept = new Set([...c.candidates].sort((a, b) => a.distanceBps - b.distanceBps).slice(0, MAX_CANDIDATES))
  return {
    side,
    targetDeltaBps: side === 'put' ? p.putTargetDeltaBps : p.callTargetDeltaBps,
    toleranceBps: p.deltaToleranceBps,
    minStrike: side === 'call' && minStrikeE18 > 0n ? e18Decimal(minStrikeE18) : null,
    candidates: c.candidates
      .filter((s) => kept.has(s))
      .map((s) => ({
        instrument: s.quote.instrument,
        strike: e18Decimal(s.quote.strikeE18),
        deltaBps: s.quote.deltaBps,
        mark: e18Decimal(s.quote.markE18),
        annualisedYieldBps: s.yieldBps === undefined ? null : bpsNumber(s.yieldBps),
        excluded: s.excluded ?? null,
      })),
    chosen: c.chosen?.instrument ?? null,
  }
}

/**
 * Why no strike was chosen: a call whose strikes near the target delta are all below the cost
 * basis waits for the index to come back (`index_below_cost_basis`); otherwise none was near enough.
 */
export function noStrikeReason(c: StrikeChoice, side: 'put' | 'call', p: TradingProfile): DecisionReason {
  const nearButBelow = c.candidates.some(
    (s) => s.excluded === 'below_cost_basis' && s.distanceBps <= p.deltaToleranceBps,
  )
  return side === 'call' && nearButBelow ? 'index_below_cost_basis' : 'no_strike_within_tolerance'
}

/** The yield part of the facts. */
export function yieldFacts(instrument: string, yieldBps: bigint, p: TradingProfile): YieldFacts {
  return { instrument, annualisedYieldBps: bpsNumber(yieldBps), floorBps: p.minAnnualisedYieldBps }
}
