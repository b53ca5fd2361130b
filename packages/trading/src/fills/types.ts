/**
 * What the fills ingestion and the settlements read through (docs/trading.md "Placing" step 5,
 * "Settlement"): a leaf the placing step's deps extend, so placing/ and fills/ share no import circle.
 */
import type { Sql } from '@wh/db'
import type { DeriveClient } from '@wh/exchange'
import type { StrategyEvents } from '../strategy-events/port'

export interface TradingSubaccount {
  /** subaccounts.id */
  readonly id: string
  readonly userId: string
  /** the exchange's subaccount id */
  readonly exchangeId: number
}

export interface FillDeps {
  readonly sql: Sql
  readonly exchange: DeriveClient
  /** PLATFORM_FEE_RATE */
  readonly platformFeeRate: string
  /** WS /ws/strategies: fills and settlements announced (aggregated) when set */
  readonly strategyEvents?: StrategyEvents
}
