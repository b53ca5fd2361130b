/**
 * What reconciliation reads from the packages above this one. The positions' fills and settlements
 * are the trading package's (`position_fills`, `positions`) and the treasury's withdrawals to L1 the
 * treasury's (`treasury_withdrawals`); both packages depend on @wh/subaccounts, so reconciliation
 * cannot import them without a cycle. The worker hands it their functions instead (its exchange ticks
 * build a `ReconcileSources`), typed here by exactly what reconciliation calls.
 */
import type { Sql } from '@wh/db'
import type { DeriveClient } from '@wh/exchange'

/** What fill ingestion acts through when reconciliation calls it: no strategy stream (nothing is announced). */
export interface FillSourceDeps {
  readonly sql: Sql
  readonly exchange: DeriveClient
  /** PLATFORM_FEE_RATE */
  readonly platformFeeRate: string
}

/** A subaccount as fill ingestion knows it. */
export interface FillSubaccount {
  /** subaccounts.id */
  readonly id: string
  readonly userId: string
  /** the exchange's subaccount id */
  readonly exchangeId: number
}

/**
 * The functions reconciliation reads through (docs/exchange.md "Accruals and reconciliation").
 *
 * @example
 *   const sources: ReconcileSources = { ingestFills, ingestSettlements, uncollectedPlatformFees, openWithdrawalTotals }
 *   await runReconcile(deps, sources, log)
 */
export interface ReconcileSources {
  /** the subaccount's new trades of our positions recorded (`option_sold`); returns the fills recorded */
  readonly ingestFills: (deps: FillSourceDeps, sub: FillSubaccount) => Promise<number>
  /** the settlements of its expired positions recorded (`option_settled`); returns how many */
  readonly ingestSettlements: (deps: FillSourceDeps, sub: FillSubaccount, nowMs: number) => Promise<number>
  /** per currency, the platform's fees journaled as revenue and still held in the user's subaccount */
  readonly uncollectedPlatformFees: (sql: Sql, subaccountRowId: string) => Promise<ReadonlyMap<string, bigint>>
  /** per currency, the treasury's withdrawals to L1 sent and not yet journaled (base units) */
  readonly openWithdrawalTotals: (sql: Sql) => Promise<ReadonlyMap<string, bigint>>
}
