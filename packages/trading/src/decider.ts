/**
 * The trading steps' side of the wheel's decision log (docs/trading.md "Why: the decision log"):
 * one call per decision where it is taken (wheel/next-leg.ts, placing/, conversions/), for legs
 * of a wheel only. @wh/trading's recordDecision writes the row (once per change) and publishes it
 * on Redis.
 */
import { decimalsOf, fromBaseUnits } from '@wh/core'
import type { Sql } from '@wh/db'
import type { Redis } from 'ioredis'
import type { DecisionFacts, DecisionKind, DecisionReason } from './decision-facts'
import { recordDecision } from './decisions'

export type Decide = (kind: DecisionKind, reason: DecisionReason, facts?: DecisionFacts) => Promise<void>

/** A recorder for one wheel's decisions at `at` (a no-op when `wheelId` is null: a leg of no wheel). */
export function decider(
  deps: { sql: Sql; redis: Redis },
  wheel: { wheelId: string | null; userId: string; positionId?: string | null },
  at: Date,
): Decide {
  return async (kind, reason, facts) => {
    if (wheel.wheelId === null) return
    await recordDecision(
      deps.sql,
      { wheelId: wheel.wheelId, userId: wheel.userId, positionId: wheel.positionId ?? null, kind, reason, facts, at },
      deps.redis,
    )
  }
}

/** Base units of `currency` as a decimal string with its code, trailing zeros trimmed ("4672.5 USDC"). */
export function amountOf(units: bigint, currency: string): string {
  const s = fromBaseUnits(units, decimalsOf(currency) ?? 18)
  return `${s.includes('.') ? s.replace(/\.?0+$/, '') : s} ${currency}`
}
