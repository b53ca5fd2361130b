/**
 * What the placing step's files share (docs/trading.md "Placing"): its deps, the live position as
 * a run reads it, and a run's summary. A leaf: run.ts, buyback.ts and market.ts import it and it
 * imports none of them, so the step and the buy-back do not import each other.
 */
import type { Clock } from '@wh/core'
import type { Redis } from 'ioredis'
import type { FillDeps } from '../fills/types'
import type { TradingProfile } from '../profiles'
import type { StrategyEvents } from '../strategy-events/port'
import type { StoredWheelSettings } from '../wheel-settings'

/**
 * What the placing step reads through (WorkerDeps satisfies it structurally; the worker adds the
 * profile and the publisher).
 */
export interface PlaceDeps extends FillDeps {
  /** the exchange cycle lock, and the decision log's publishes */
  readonly redis: Redis
  readonly clock: Clock
  readonly profile: TradingProfile
  /** WS /ws/strategies: every step tells what it did (@wh/market's `strategyEventsOn(redis)`) */
  readonly strategyEvents: StrategyEvents
  readonly hooks?: PlaceHooks
  /** where a step's failure is told (the tick's log); its reason is on the row either way */
  readonly log?: StepLog | undefined
}

/** A logger, structurally (the worker's pino child satisfies it). */
export interface StepLog {
  warn(obj: object, msg?: string): void
}

/** Test seam, as in the funding step: a crash test stops the step at this point by throwing. */
export interface PlaceHooks {
  /** a closing leg's buy-back order was accepted by the exchange; nothing of its answer stored or ingested */
  afterBuyBackSent?: (positionId: string) => Promise<void>
}

/** a wheel's leg carries the wheel's settings columns (docs/trading.md "Wheel settings") */
export interface Live extends StoredWheelSettings {
  id: string
  user_id: string
  asset: string
  side: 'put' | 'call'
  state: 'requested' | 'funding' | 'placing' | 'open' | 'closing'
  subaccount_id: string
  exchange_id: string | null
  stopped_at: Date | null
  collateral_amount: string
  collateral_currency: string
  funding_state: string | null
  funding_reason: string | null
  instrument: string | null
  size_e18: string | null
  filled_e18: string
  bought_e18: string
  window_ends_at: Date | null
  next_reprice_at: Date | null
  cancel_requested_at: Date | null
  created_at: Date
  paused: boolean
  /** the wheel's cost basis (e18 USD per unit), when a wheel opened this leg */
  cost_basis: string | null
  /** a wheel opened this leg (its strategy is the wheel's, docs/market-data.md) */
  wheel: boolean
  wheel_id: string | null
}

export interface PlaceSummary {
  locked: boolean
  steps: Record<string, number>
}
