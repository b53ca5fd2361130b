/**
 * The users' subaccounts (docs/exchange.md "Subaccounts: funding and release"): the one owner of
 * `subaccounts` writes (docs/architecture.md "Table owners"). One row per user and underlying,
 * created on first need; its exchange id is recorded once the creating funding is known; reconciliation
 * stops it and an operator clears the stop. Each function is one statement, run in the caller's
 * transaction where the caller passes one (a lock or an append must span it). Reads stay with
 * their readers.
 */
import type { Queryable } from '@wh/ledger'

/** The row for (user, asset), created when missing; an existing one is left as it is. */
export async function ensureSubaccount(sql: Queryable, userId: string, asset: string): Promise<void> {
  await sql`insert into subaccounts (user_id, asset) values (${userId}, ${asset})
    on conflict (user_id, asset) do nothing`
}

/** The subaccount's exchange id, written once: a row that has one keeps it. */
export async function recordExchangeId(sql: Queryable, subaccountRowId: string, exchangeId: number): Promise<void> {
  await sql`update subaccounts set exchange_id = ${exchangeId}, updated_at = now()
    where id = ${subaccountRowId} and exchange_id is null`
}

/** Accrual histories are read from `closedBeforeMs` on (the cursor never moves back); in the caller's transaction with its appends. */
export async function advanceAccrualCursor(
  tx: Queryable,
  subaccountRowId: string,
  closedBeforeMs: number,
): Promise<void> {
  await tx`
    update subaccounts set accrued_to_ms = greatest(coalesce(accrued_to_ms, 0), ${closedBeforeMs}),
      updated_at = now()
    where id = ${subaccountRowId}`
}

/**
 * Stops the subaccount (a stop already raised keeps its time, the reason is the latest); in the
 * caller's transaction, which holds the row's lock and appends the stop.
 */
export async function stopSubaccount(tx: Queryable, subaccountRowId: string, at: Date, reason: string): Promise<void> {
  await tx`
    update subaccounts set stopped_at = coalesce(stopped_at, ${at}), stop_reason = ${reason},
      updated_at = now()
    where id = ${subaccountRowId}`
}

/** Clears the stop; in the caller's transaction, which holds the row's lock and appends `stop_cleared`. */
export async function clearSubaccountStop(tx: Queryable, subaccountRowId: string): Promise<void> {
  await tx`update subaccounts set stopped_at = null, stop_reason = null, updated_at = now() where id = ${subaccountRowId}`
}
