/**
 * What funding and release legs share: a `subaccount_transfers` row carries
 * one signed collateral movement between the platform's exchange wallet and a subaccount. The
 * signed params are committed BEFORE they are sent, so a restarted worker re-sends that same
 * action (the exchange takes a nonce once) or finds it in the exchange's histories; it never signs
 * a second one for the same row. docs/exchange.md "Subaccounts: funding and release" has the rules.
 * The rows are written only through @wh/subaccounts (their owner): here the exchange's side, signing,
 * sending and reading the histories.
 */
import { errorMessage, fromBaseUnits, toBaseUnits } from '@wh/core'
import type { Sql } from '@wh/db'
import {
  type DeriveClient,
  ExchangeError,
  ExchangeInsufficientMarginError,
  RPC,
  type SignedTransfer,
  type TxResult,
} from '@wh/exchange'
import type { Alerter } from '@wh/wallet'
import {
  insertSubmittedMovement,
  type MovementKind,
  markMovementFailed,
  markTransferAccepted,
  type TransferRow,
} from './transfers'

/**
 * Expiry of a movement's signature. Derive refuses less than five minutes ahead; a short life
 * bounds how long an unanswered send can keep its reservation before it is known to be dead.
 */
export const TRANSFER_SIGNATURE_TTL_SEC = 15 * 60
/** After its expiry, how long an action not found in the histories may still show up there. */
export const LANDED_GRACE_SEC = 5 * 60
/** History entries may carry the exchange's clock, a little behind ours. */
export const HISTORY_SKEW_MS = 5_000
/** Unknown subaccounts of the wallet searched for a lost create_subaccount, per attempt. */
export const CREATE_SEARCH_MAX_SUBACCOUNTS = 50

/** A stable code for an error of a transfer's run: the AppError's, else the exchange being unreachable. */
export function errorCodeOf(err: unknown): string {
  const code = (err as { code?: unknown })?.code
  return typeof code === 'string' && /^[A-Z][A-Z0-9_]{1,63}$/.test(code) ? code : 'EXCHANGE_UNAVAILABLE'
}

/** What a tick acts through. */
export interface TransferDeps {
  readonly sql: Sql
  readonly exchange: DeriveClient
  readonly clock: { now(): Date }
  readonly alerter: Alerter
  readonly log: { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void }
}

/** The ERC20 decimals of an exchange collateral (cached by the client). */
export async function decimalsOf(exchange: DeriveClient, currency: string): Promise<number> {
  const c = await exchange.getCurrency(currency)
  if (!c.erc20_details) throw new Error(`${currency} is not an ERC20 collateral at the exchange`)
  return c.erc20_details.decimals
}

/** Base units as the decimal string the exchange signs and reads. */
export async function exchangeAmount(exchange: DeriveClient, currency: string, units: bigint): Promise<string> {
  return fromBaseUnits(units, await decimalsOf(exchange, currency))
}

/** A decimal string from the exchange as base units; a value finer than the currency's unit is null. */
export function unitsOf(decimal: string, decimals: number): bigint | null {
  try {
    return toBaseUnits(decimal.replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, ''), decimals, 'exact')
  } catch {
    return null
  }
}

/** Signs a movement with the transfer TTL; nothing is sent. */
export function signMovement(
  deps: TransferDeps,
  r:
    | { method: 'create_subaccount'; currency: string; amount: string }
    | { method: 'deposit' | 'withdraw'; subaccountId: number; currency: string; amount: string },
): Promise<SignedTransfer> {
  const signature_expiry_sec = Math.floor(deps.clock.now().getTime() / 1000) + TRANSFER_SIGNATURE_TTL_SEC
  if (r.method === 'create_subaccount')
    return deps.exchange.signTransfer({
      method: 'create_subaccount',
      asset_name: r.currency,
      amount: r.amount,
      signature_expiry_sec,
    })
  return deps.exchange.signTransfer({
    method: r.method,
    subaccount_id: r.subaccountId,
    asset_name: r.currency,
    amount: r.amount,
    signature_expiry_sec,
  })
}

/** Found in the exchange's histories: the stored action landed. */
export interface Landed {
  /** the exchange's transaction id (deposits), or the tx hash where the history has no id (withdrawals) */
  transactionId: string
  settled: boolean
  /** the new subaccount, for a create_subaccount */
  exchangeSubaccountId?: number
}

export type SendOutcome =
  | { kind: 'accepted'; result: TxResult }
  | { kind: 'landed'; landed: Landed }
  /** refused and nothing landed: the row fails; `margin` when the refusal was for funds or margin */
  | { kind: 'refused'; reason: string; margin: boolean }
  /** signature expired past the grace period and nothing landed: the row fails */
  | { kind: 'expired' }
  /** transport failure, or landed-but-not-yet-visible: try again next tick */
  | { kind: 'retry'; reason: string }

/**
 * Sends a row's stored action as it is. `firstSend` is true only when this process signed it a
 * moment ago (so a refusal proves nothing landed); a row found 'submitted' may have been sent by a
 * process that died, so a refusal is checked against the histories before the row fails.
 */
export async function sendStored(
  deps: TransferDeps,
  row: TransferRow,
  ctx: { exchangeSubaccountId: number | null; firstSend: boolean },
): Promise<SendOutcome> {
  if (!row.method || !row.params) throw new Error(`transfer ${row.id} has no stored action`)
  let refusal: ExchangeError
  try {
    return { kind: 'accepted', result: await deps.exchange.sendSigned({ method: row.method, params: row.params }) }
  } catch (err) {
    if (!(err instanceof ExchangeError) || err.retryable) return { kind: 'retry', reason: errorMessage(err) }
    refusal = err
  }
  const replayRefusal = refusal.rpcCode === RPC.NONCE_NOT_UNIQUE || refusal.rpcCode === RPC.INVALID_SIGNATURE_EXPIRY
  if (ctx.firstSend && !replayRefusal)
    return { kind: 'refused', reason: refusal.message, margin: refusal instanceof ExchangeInsufficientMarginError }
  let landed: Landed | null
  try {
    landed = await findLanded(deps, row, ctx.exchangeSubaccountId)
  } catch (err) {
    return { kind: 'retry', reason: `history lookup failed: ${errorMessage(err)}` }
  }
  if (landed) return { kind: 'landed', landed }
  if (isPastGrace(deps, row)) return { kind: 'expired' }
  if (replayRefusal) return { kind: 'retry', reason: `${refusal.message}; not in the histories yet` }
  return { kind: 'refused', reason: refusal.message, margin: refusal instanceof ExchangeInsufficientMarginError }
}

function isPastGrace(deps: TransferDeps, row: TransferRow): boolean {
  const expirySec = Number(row.params?.signature_expiry_sec ?? 0)
  return deps.clock.now().getTime() / 1000 > expirySec + LANDED_GRACE_SEC
}

/**
 * Looks for a row's action in the exchange's histories: an entry of the same subaccount, asset
 * and amount, no earlier than the row was submitted, whose id no other row has claimed. Deposits
 * carry the exchange's transaction id; withdrawal history only a tx hash, which then stands in
 * for it. A lost create_subaccount is searched in the wallet's subaccounts no row knows yet.
 */
export async function findLanded(
  deps: TransferDeps,
  row: TransferRow,
  exchangeSubaccountId: number | null,
): Promise<Landed | null> {
  if (!row.submitted_at) return null
  const since = row.submitted_at.getTime() - HISTORY_SKEW_MS
  const decimals = await decimalsOf(deps.exchange, row.currency)
  const amount = BigInt(row.amount)
  // a charged creation lands between the amount (the fee cap all taken) and what it sent (none taken)
  const most = row.method === 'create_subaccount' ? sentUnits(row, decimals) : amount
  const matches = (e: { asset: string; amount: string; timestamp: number }) => {
    const units = unitsOf(e.amount, decimals)
    return e.asset === row.currency && e.timestamp >= since && units !== null && units >= amount && units <= most
  }

  if (row.method === 'withdraw') {
    if (exchangeSubaccountId === null) return null
    const { events } = await deps.exchange.getWithdrawalHistory({
      subaccount_id: exchangeSubaccountId,
      start_timestamp: since,
    })
    const hit = await firstUnclaimed(
      deps.sql,
      events.filter(matches).map((e) => ({ id: e.tx_hash, settled: e.tx_status === 'settled' })),
    )
    return hit ? { transactionId: hit.id, settled: hit.settled } : null
  }

  const inSubaccount = async (sub: number) => {
    const { events } = await deps.exchange.getDepositHistory({ subaccount_id: sub, start_timestamp: since })
    return firstUnclaimed(
      deps.sql,
      events.filter(matches).map((e) => ({ id: e.transaction_id, settled: e.tx_status === 'settled' })),
    )
  }
  if (row.method === 'deposit') {
    if (exchangeSubaccountId === null) return null
    const hit = await inSubaccount(exchangeSubaccountId)
    return hit ? { transactionId: hit.id, settled: hit.settled } : null
  }
  // create_subaccount: the new subaccount is one of the wallet's that no subaccounts row holds
  for (const sub of await newestUnrecorded(deps)) {
    const hit = await inSubaccount(sub)
    if (hit) return { transactionId: hit.id, settled: hit.settled, exchangeSubaccountId: sub }
  }
  return null
}

/**
 * Where a creation's new subaccount is looked for: the wallet's subaccounts that no subaccounts row holds,
 * the newest CREATE_SEARCH_MAX_SUBACCOUNTS of them, newest first. Never the funding subaccount (the
 * platform's own, the sender of every funding): its transfer history grows with every movement, and a
 * search would read all of it for each creation.
 */
async function newestUnrecorded(deps: TransferDeps): Promise<number[]> {
  const { subaccount_ids } = await deps.exchange.getSubaccounts()
  const known = new Set(
    (
      await deps.sql<{ exchange_id: string }[]>`
        select exchange_id::text as exchange_id from subaccounts
        where exchange_id = any(${subaccount_ids.map(String)}::bigint[])`
    ).map((r) => Number(r.exchange_id)),
  )
  const funding = deps.exchange.fundingSubaccountId
  return subaccount_ids
    .filter((id) => !known.has(id) && id !== funding)
    .sort((a, b) => b - a)
    .slice(0, CREATE_SEARCH_MAX_SUBACCOUNTS)
}

async function firstUnclaimed<T extends { id: string }>(sql: Sql, candidates: T[]): Promise<T | null> {
  if (candidates.length === 0) return null
  const claimed = new Set(
    (
      await sql<{ transaction_id: string }[]>`
        select transaction_id from subaccount_transfers where transaction_id = any(${candidates.map((c) => c.id)})`
    ).map((r) => r.transaction_id),
  )
  return candidates.find((c) => !claimed.has(c.id)) ?? null
}

/**
 * The subaccount a settled create_subaccount made: from get_transaction's data where the exchange
 * reports it, else the unknown subaccount whose deposit history holds the transaction.
 */
export async function createdSubaccountId(deps: TransferDeps, transactionId: string, data: unknown): Promise<number> {
  const fromData = (data as { subaccount_id?: unknown } | null)?.subaccount_id
  if (typeof fromData === 'number' && Number.isSafeInteger(fromData)) return fromData
  for (const sub of await newestUnrecorded(deps)) {
    const { events } = await deps.exchange.getDepositHistory({ subaccount_id: sub })
    if (events.some((e) => e.transaction_id === transactionId)) return sub
  }
  throw new Error(`create_subaccount ${transactionId} settled but its subaccount was not found`)
}

/** What a row's stored action sends, in base units: a charged creation's amount carries the fee cap on top. */
function sentUnits(row: TransferRow, decimals: number): bigint {
  const sent = row.params?.amount
  const units = typeof sent === 'string' ? unitsOf(sent, decimals) : null
  return units !== null && units > BigInt(row.amount) ? units : BigInt(row.amount)
}

/** What a settled creation cost the platform: see `creationFeeOf`. */
export interface CreationFee {
  /** what the exchange took in kind (rounded up to base units) */
  readonly feeAmount: bigint
  /** what was sent on top and not taken: left in the user's subaccount */
  readonly feeExcess: bigint
  /** what the fee took beyond what was sent on top: the user's subaccount is short by it until topped up */
  readonly shortfall: bigint
}

/**
 * What a settled creation cost the platform (docs/exchange-v3.md "Movements on v3"): on v3 it is signed with a fee
 * cap (`max_fee_usd`) and sends the cap on top of the row's amount. `feeAmount` is what the exchange took (the
 * sender's transfer row, read back), `feeExcess` the rest of what was sent on top, left in the user's subaccount,
 * `shortfall` what it took beyond that (a non-USD asset whose price fell between signing and settling).
 * Undefined for a movement signed without a cap (a row from the v2 days, deposits). Throws while the fee cannot be read (retried).
 */
export async function creationFeeOf(
  deps: TransferDeps,
  row: TransferRow,
  transactionId: string,
): Promise<CreationFee | undefined> {
  const cap = row.params?.max_fee_usd
  if (row.method !== 'create_subaccount' || typeof cap !== 'string' || /^0*(\.0*)?$/.test(cap)) return undefined
  const start_timestamp = (row.submitted_at?.getTime() ?? 0) - HISTORY_SKEW_MS
  const fee = await deps.exchange.movementFee({ transaction_id: transactionId, start_timestamp })
  if (fee === null) return undefined
  const decimals = await decimalsOf(deps.exchange, row.currency)
  // rounded up: the journal's subaccount never holds more than the exchange's (as fees are, docs/ledger.md)
  const feeAmount = toBaseUnits(fee, decimals, 'up')
  const onTop = sentUnits(row, decimals) - BigInt(row.amount)
  if (feeAmount > onTop)
    deps.log.info({ transferId: row.id, fee, onTop: onTop.toString() }, 'creation fee above what was sent: topped up')
  return {
    feeAmount,
    feeExcess: onTop > feeAmount ? onTop - feeAmount : 0n,
    shortfall: feeAmount > onTop ? feeAmount - onTop : 0n,
  }
}

/** Derive's transaction statuses as three outcomes. */
export function settlementOf(status: string): 'settled' | 'pending' | 'failed' {
  if (status === 'settled') return 'settled'
  if (status === 'reverted' || status === 'ignored' || status === 'timed_out') return 'failed'
  return 'pending'
}

/** Where one pass of `advanceMovement` left a row. */
export type MovementOutcome =
  | { kind: 'settled' }
  | { kind: 'pending' }
  /** the row is `failed` now; `retryable`: refused for margin or funds, or expired unlanded (nothing moved) */
  | { kind: 'failed'; reason: string; retryable: boolean }

/**
 * One pass over a movement row that is `submitted` or `accepted`, by the rules of docs/exchange.md
 * ("Crash and error rules"): send the stored action (never a new one), take the transaction id,
 * read its status; settled → `settle(tx, transactionId, from)` runs inside ONE database transaction
 * with the caller's own updates (it must move the row out of `from` conditionally and return false
 * when it did not, so a concurrent pass records nothing twice). Used by conversions and fee
 * collection; funding and release legs keep their own copies of these steps for their events.
 */
export async function advanceMovement(
  deps: TransferDeps,
  loaded: TransferRow,
  ctx: { exchangeSubaccountId: number; firstSend: boolean },
  settle: (tx: import('@wh/db').Sql, transactionId: string, from: 'submitted' | 'accepted') => Promise<boolean>,
): Promise<MovementOutcome> {
  let row = loaded
  const fail = async (reason: string, retryable: boolean): Promise<MovementOutcome> => {
    await markMovementFailed(deps.sql, row.id, reason.slice(0, 500), deps.clock.now())
    return { kind: 'failed', reason, retryable }
  }
  const settleIn = async (transactionId: string, from: 'submitted' | 'accepted'): Promise<MovementOutcome> =>
    (await deps.sql.begin((t) => settle(t as unknown as import('@wh/db').Sql, transactionId, from)))
      ? { kind: 'settled' }
      : { kind: 'pending' }
  if (row.state === 'submitted') {
    const sent = await sendStored(deps, row, ctx)
    if (sent.kind === 'retry') return { kind: 'pending' }
    if (sent.kind === 'expired') return fail(`${row.method} signature expired before it landed`, true)
    if (sent.kind === 'refused') return fail(`exchange refused the ${row.method}: ${sent.reason}`, sent.margin)
    if (sent.kind === 'landed')
      return sent.landed.settled ? settleIn(sent.landed.transactionId, 'submitted') : { kind: 'pending' }
    const accepted = await markTransferAccepted(deps.sql, row.id, sent.result.transaction_id)
    if (!accepted) return { kind: 'pending' }
    row = accepted
  }
  let raw: string
  try {
    raw = (await deps.exchange.getTransaction(row.transaction_id as string)).status
  } catch (err) {
    if (err instanceof ExchangeError && !err.retryable) throw err
    return { kind: 'pending' }
  }
  const status = settlementOf(raw)
  if (status === 'pending') return { kind: 'pending' }
  if (status === 'failed') return fail(`exchange transaction ${row.transaction_id} ${raw}`, true)
  return settleIn(row.transaction_id as string, 'accepted')
}

/**
 * Signs a withdraw or deposit of `units` for a subaccount and inserts it `submitted` inside `tx`
 * (the caller's transaction, with its own state change), so the action is stored before any send.
 */
export async function insertSignedMovement(
  deps: TransferDeps,
  tx: import('@wh/db').Sql,
  m: {
    kind: MovementKind
    method: 'deposit' | 'withdraw'
    userId: string
    subaccountId: string
    exchangeSubaccountId: number
    currency: string
    units: bigint
  },
  signed?: SignedTransfer,
): Promise<TransferRow> {
  const action =
    signed ??
    (await signMovement(deps, {
      method: m.method,
      subaccountId: m.exchangeSubaccountId,
      currency: m.currency,
      amount: await exchangeAmount(deps.exchange, m.currency, m.units),
    }))
  return insertSubmittedMovement(tx, m, action, deps.clock.now())
}
