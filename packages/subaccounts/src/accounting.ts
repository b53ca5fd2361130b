/**
 * What the accounting runs (accruals/, reconcile/) share: what they act through, the subaccount rows
 * they work on, the currency decimals of the exchange, and a bounded runner that spreads the
 * per-subaccount work over a few exchange calls at a time and stops starting new work before the
 * cycle lock's TTL could run out under it.
 */
import { type Config, LOCK_TTL_MS } from '@wh/config'
import { AppError, type Clock } from '@wh/core'
import type { Sql } from '@wh/db'
import type { DeriveClient } from '@wh/exchange'
import type { Alerter } from '@wh/wallet'
import type { Redis } from 'ioredis'

/** What accruals and reconciliation act through (the worker's deps satisfy it; tests and the bench build it). */
export interface AccountingDeps {
  readonly sql: Sql
  /** the cycle lock, the funding subaccount's accrual cursor, the alert throttles, the drift metric */
  readonly redis: Redis
  readonly exchange: DeriveClient
  readonly clock: Clock
  readonly alerter: Alerter
  readonly config: Config
}

/** Where the accounting runs say what they did (the worker's logger, or a silent one). */
export interface AccountingLog {
  info(obj: object, msg?: string): void
  warn(obj: object, msg?: string): void
}

/** A subaccount known at the exchange (its `exchange_id` is set). */
export interface ExchangeSubaccount {
  /** subaccounts.id (uuid) */
  readonly id: string
  readonly userId: string
  readonly asset: string
  /** Derive's subaccount id */
  readonly exchangeId: number
  /** the ledger's `{subaccountId}`: Derive's id as a decimal string (spec 2.4, 6.1) */
  readonly ledgerId: string
  /** accrual cursor: histories are complete and recorded up to here (ms, exclusive) */
  readonly accruedToMs: number | null
  readonly stoppedAt: Date | null
}

/** The `subaccounts` columns `toExchangeSubaccount` reads (exchange_id and accrued_to_ms as int8 text). */
export interface SubaccountDbRow {
  id: string
  user_id: string
  asset: string
  exchange_id: string
  accrued_to_ms: string | null
  stopped_at: Date | null
}

export function toExchangeSubaccount(r: SubaccountDbRow): ExchangeSubaccount {
  const exchangeId = Number(r.exchange_id)
  // Derive's ids are JSON numbers: beyond 2^53 they could not be sent back exactly
  if (!Number.isSafeInteger(exchangeId) || exchangeId <= 0)
    throw new AppError({ code: 'INVALID_EXCHANGE_ID', message: 'exchange id out of range', details: { id: r.id } })
  return {
    id: r.id,
    userId: r.user_id,
    asset: r.asset,
    exchangeId,
    ledgerId: String(exchangeId),
    accruedToMs: r.accrued_to_ms === null ? null : Number(r.accrued_to_ms),
    stoppedAt: r.stopped_at,
  }
}

/**
 * Exchange calls in flight at once per tick. Derive rate-limits per wallet; four keeps a 500-
 * subaccount run well inside the lock's budget at real-exchange latencies (docs/exchange.md).
 */
export const ACCOUNTING_CONCURRENCY = 4
/**
 * A tick starts no new subaccount after this long: the cycle lock expires after LOCK_TTL_MS, and
 * work still running then would no longer be protected from a funding or a release. What is left
 * over is picked up by the next tick.
 */
export const ACCOUNTING_BUDGET_MS = LOCK_TTL_MS / 2

/**
 * Runs `fn` over `items`, `concurrency` at a time, starting nothing new once `budgetMs` of real
 * time has passed. Returns how many were started. `fn` must not throw (catch per item).
 */
export async function runBounded<T>(
  items: readonly T[],
  fn: (item: T) => Promise<void>,
  opts: { concurrency?: number; budgetMs?: number } = {},
): Promise<number> {
  const concurrency = opts.concurrency ?? ACCOUNTING_CONCURRENCY
  const deadline = performance.now() + (opts.budgetMs ?? ACCOUNTING_BUDGET_MS)
  let next = 0
  const lane = async () => {
    while (next < items.length && performance.now() < deadline) {
      const item = items[next++] as T
      await fn(item)
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, lane))
  return next
}

export class UnknownCurrencyDecimalsError extends AppError {
  constructor(currency: string) {
    super({
      code: 'UNKNOWN_CURRENCY_DECIMALS',
      message: 'the exchange gives no ERC20 decimals for a currency',
      details: { currency },
    })
  }
}

/** The base-unit decimals of a collateral currency, from Derive's `get_currency` (cached by the client). */
export async function currencyDecimals(exchange: DeriveClient, currency: string): Promise<number> {
  const decimals = (await exchange.getCurrency(currency)).erc20_details?.decimals
  if (decimals === undefined || !Number.isInteger(decimals) || decimals < 0 || decimals > 18)
    throw new UnknownCurrencyDecimalsError(currency)
  return decimals
}
