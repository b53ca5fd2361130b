/**
 * Movements between the platform's exchange wallet and a subaccount (docs/exchange.md "Subaccounts:
 * funding and release"): the one owner of `subaccount_transfers` writes (docs/architecture.md
 * "Table owners"). Funding, releases and fee collection sign, send and ask the exchange (movements.ts,
 * funding/, release/, fees/); every change of a row is one of the transitions below. Each is a conditional
 * statement (`where state = <expected>`), so a run that lost a race, or one re-running after a
 * crash, changes nothing, and the signed params are committed before anything is sent: a worker
 * killed mid-movement re-sends that same action, never a second one. A transition that takes a
 * `tx` runs in the caller's transaction, with the caller's own state change.
 */
import type { Sql } from '@wh/db'
import type { SignedTransfer } from '@wh/exchange'
import { retryDelayMs } from '@wh/jobs'
import { append, type Queryable, type ReservedFunding, reserveFunding } from '@wh/ledger'
import { recordExchangeId } from './subaccounts'

/**
 * `top_up`: what a creation's fee in kind took beyond what was sent on top of the amount, sent after it from the
 * platform's funding subaccount at the platform's cost (docs/exchange-v3.md "Movements on v3").
 */
export type TransferKind = 'fund' | 'release' | 'convert_out' | 'convert_in' | 'fee' | 'top_up'
export type TransferState = 'reserved' | 'submitted' | 'accepted' | 'funded' | 'released' | 'done' | 'failed'

/** A subaccount_transfers row as the ticks read it (amount and ids as Postgres returns them). */
export interface TransferRow {
  id: string
  user_id: string
  subaccount_id: string
  kind: TransferKind
  release_id: string | null
  state: TransferState
  currency: string
  amount: string
  method: SignedTransfer['method'] | null
  params: SignedTransfer['params'] | null
  transaction_id: string | null
  reason: string | null
  submitted_at: Date | null
  created_at: Date
  /** failed attempts (docs/hostile-world.md "Fair queues") */
  attempts: number
}

/** The columns of a TransferRow, for `select ${TRANSFER_COLUMNS} from subaccount_transfers …`. */
export const TRANSFER_COLUMNS = `id, user_id, subaccount_id, kind, release_id, state, currency, amount::text as amount,
  method, params, transaction_id, reason, submitted_at, created_at, attempts`

/**
 * A funding (kind 'fund') is a state machine, one function per transition, each one transaction
 * (docs/exchange.md "Funding"):
 *
 *   (none)    → reserved   `reserveFundingTransfer` (the ledger's reserve, against the free balance)
 *   reserved  → reserved   `holdFunding` (a stop or an open release holds it, saying why)
 *             → submitted  `storeSignedFunding` (the signed action committed before any send)
 *             → failed     `cancelReservedFunding` (its position cancelled before it was sent)
 *   submitted → accepted   `markTransferAccepted` (the exchange's transaction id)
 *             → reserved   `returnFundingToReserved` (the wallet short: signed afresh next run)
 *   accepted  → funded     `settleFunding` (ONE transaction with the exchange id, the append and, when the
 *                          creation fee took more than was sent for it, the signed top-up: `top_up` → submitted)
 *   any open  → failed     `failFunding` (the reservation is released)
 */
export type FundingState = Extract<TransferState, 'reserved' | 'submitted' | 'accepted' | 'funded' | 'failed'>

/**
 * → reserved: reserves `amount` of the free balance for the user's subaccount on `asset` (the row,
 * and the subaccount on first need, are written by the ledger's reserve under its transit lock:
 * @wh/ledger `reserveFunding`). In the caller's transaction; throws InsufficientFreeBalanceError.
 */
export function reserveFundingTransfer(
  tx: Queryable,
  req: { userId: string; asset: string; currency: string; amount: bigint; transferId?: string },
): Promise<ReservedFunding> {
  return reserveFunding(tx, req)
}

/** reserved, held: the reason it may not leave now (a stop, an open release) is stored. */
export async function holdFunding(sql: Sql, transferId: string, reason: string): Promise<void> {
  await sql`update subaccount_transfers set reason = ${reason}, updated_at = now()
    where id = ${transferId} and state = 'reserved'`
}

/** reserved → submitted: the signed action stored; undefined when another run moved the row. */
export async function storeSignedFunding(
  sql: Sql,
  transferId: string,
  action: SignedTransfer,
  submittedAt: Date,
): Promise<TransferRow | undefined> {
  const [stored] = await sql.unsafe<TransferRow[]>(
    `update subaccount_transfers set state = 'submitted', method = $1, params = $2::text::jsonb, nonce = $3,
       submitted_at = $4, reason = null, updated_at = now()
     where id = $5 and state = 'reserved'
     returning ${TRANSFER_COLUMNS}`,
    [action.method, JSON.stringify(action.params), String(action.params.nonce), submittedAt, transferId],
  )
  return stored
}

/** reserved → failed: the funding of a cancelled position, not sent yet; in the caller's transaction. */
export async function cancelReservedFunding(tx: Queryable, transferId: string): Promise<void> {
  await tx`update subaccount_transfers set state = 'failed', reason = 'position cancelled', updated_at = now()
    where id = ${transferId} and state = 'reserved'`
}

/**
 * submitted → accepted with the exchange's transaction id (a funding, a release leg, a conversion
 * or fee movement alike); undefined when another run moved the row.
 */
export async function markTransferAccepted(
  sql: Sql,
  transferId: string,
  transactionId: string,
): Promise<TransferRow | undefined> {
  const [accepted] = await sql.unsafe<TransferRow[]>(
    `update subaccount_transfers set state = 'accepted', transaction_id = $1, updated_at = now()
     where id = $2 and state = 'submitted'
     returning ${TRANSFER_COLUMNS}`,
    [transactionId, transferId],
  )
  return accepted
}

/**
 * submitted → reserved: the exchange wallet is short (nothing landed), so the action is dropped and
 * signed afresh next run, while the row is younger than `waitMs` (Postgres time). False otherwise.
 */
export async function returnFundingToReserved(
  sql: Sql,
  transferId: string,
  reason: string,
  waitMs: number,
): Promise<boolean> {
  const [waiting] = await sql`
    update subaccount_transfers set state = 'reserved', method = null, params = null, nonce = null,
      submitted_at = null, reason = ${reason}, updated_at = now()
    where id = ${transferId} and state = 'submitted'
      and created_at > now() - make_interval(secs => ${waitMs / 1000})
    returning id`
  return waiting !== undefined
}

/**
 * accepted → funded, ONE transaction: the row out of the in-flight states first (so the
 * authorizing check does not count it twice), the subaccount's exchange id for a creation, and
 * `subaccount_funded`. False when another run moved the row (nothing written).
 */
export async function settleFunding(
  sql: Sql,
  row: TransferRow,
  s: {
    exchangeId: number
    transactionId: string
    now: Date
    /** a charged creation (docs/exchange-v3.md "Movements on v3"): the platform's cost, booked in the same event */
    fee?: { feeAmount: bigint; feeExcess: bigint }
    /** the fee took more than was sent for it: the signed deposit that makes the subaccount whole, stored here */
    topUp?: { action: SignedTransfer; units: bigint }
  },
): Promise<boolean> {
  return sql.begin(async (t) => {
    const [locked] = await t`
      update subaccount_transfers set state = 'funded', completed_at = ${s.now}, reason = null, updated_at = now()
      where id = ${row.id} and state = 'accepted' returning id`
    if (!locked) return false
    await recordExchangeId(t, row.subaccount_id, s.exchangeId)
    await append(t, {
      type: 'subaccount_funded',
      payload: {
        userId: row.user_id,
        subaccountId: String(s.exchangeId),
        transactionId: s.transactionId,
        currency: row.currency,
        amount: BigInt(row.amount),
        ...s.fee,
      },
      occurredAt: s.now,
    })
    if (s.topUp)
      await insertSubmittedMovement(
        t,
        {
          kind: 'top_up',
          userId: row.user_id,
          subaccountId: row.subaccount_id,
          currency: row.currency,
          units: s.topUp.units,
        },
        s.topUp.action,
        s.now,
      )
    return true
  })
}

/** reserved / submitted / accepted → failed: the reservation is released. False when it was not open. */
export async function failFunding(sql: Sql, transferId: string, reason: string, now: Date): Promise<boolean> {
  const [updated] = await sql`
    update subaccount_transfers set state = 'failed', reason = ${reason}, completed_at = ${now},
      updated_at = now()
    where id = ${transferId} and state in ('reserved', 'submitted', 'accepted') returning id`
  return updated !== undefined
}

/**
 * A row whose run failed (`errorCode`) waits out its backoff (docs/hostile-world.md "Fair queues");
 * one that is still waiting for something else goes behind the rows not served yet. Either way the
 * rows behind it are served in their usual time.
 */
export async function deferTransfer(
  sql: Sql,
  row: { id: string; attempts: number },
  errorCode?: string,
): Promise<void> {
  if (errorCode === undefined) {
    await sql`update subaccount_transfers set next_attempt_at = now() where id = ${row.id}`
    return
  }
  const attempts = row.attempts + 1
  await sql`
    update subaccount_transfers set attempts = ${attempts}, last_error_code = ${errorCode},
      next_attempt_at = now() + make_interval(secs => ${retryDelayMs(attempts) / 1000})
    where id = ${row.id}`
}

/** The movements that are not fundings: stored already signed (`submitted`), then sent, accepted and settled. */
export type MovementKind = Exclude<TransferKind, 'fund' | 'release'>

/**
 * → submitted: a conversion or fee movement inserted with its signed action, in the caller's
 * transaction (with its own state change), so the action is stored before any send.
 */
export async function insertSubmittedMovement(
  tx: Queryable,
  m: { kind: MovementKind; userId: string; subaccountId: string; currency: string; units: bigint },
  action: SignedTransfer,
  submittedAt: Date,
): Promise<TransferRow> {
  const [row] = await tx.unsafe<TransferRow[]>(
    `insert into subaccount_transfers (user_id, subaccount_id, kind, state, currency, amount, method, params, nonce,
       submitted_at)
     values ($1, $2, $3, 'submitted', $4, $5, $6, $7::text::jsonb, $8, $9)
     returning ${TRANSFER_COLUMNS}`,
    [
      m.userId,
      m.subaccountId,
      m.kind,
      m.currency,
      m.units.toString(),
      action.method,
      JSON.stringify(action.params),
      String(action.params.nonce),
      submittedAt,
    ],
  )
  return row as TransferRow
}

/**
 * → submitted: a release leg inserted with its signed withdraw, in the caller's transaction (the
 * one that moves the release to withdrawing: @wh/subaccounts `markReleaseWithdrawing`).
 */
export async function insertReleaseLeg(
  tx: Queryable,
  leg: { userId: string; subaccountId: string; releaseId: string; currency: string; units: bigint },
  action: SignedTransfer,
  submittedAt: Date,
): Promise<TransferRow> {
  const [row] = await tx.unsafe<TransferRow[]>(
    `insert into subaccount_transfers (user_id, subaccount_id, kind, release_id, state, currency, amount, method,
       params, nonce, submitted_at)
     values ($1, $2, 'release', $3, 'submitted', $4, $5, $6, $7::text::jsonb, $8, $9)
     returning ${TRANSFER_COLUMNS}`,
    [
      leg.userId,
      leg.subaccountId,
      leg.releaseId,
      leg.currency,
      leg.units.toString(),
      action.method,
      JSON.stringify(action.params),
      String(action.params.nonce),
      submittedAt,
    ],
  )
  return row as TransferRow
}

/** A settled release leg: submitted / accepted (`from` only) → released, in the transaction that appends its event. */
export async function markLegReleased(
  tx: Queryable,
  legId: string,
  s: { transactionId: string; from: 'submitted' | 'accepted'; now: Date },
): Promise<boolean> {
  const [moved] = await tx`
    update subaccount_transfers set state = 'released', transaction_id = ${s.transactionId}, completed_at = ${s.now},
      reason = null, updated_at = now()
    where id = ${legId} and state = ${s.from} returning id`
  return moved !== undefined
}

/** A settled fee collection: submitted / accepted (`from` only) → done, in the transaction that marks its fills. */
export async function markFeeTransferDone(
  tx: Queryable,
  transferId: string,
  s: { transactionId: string; from: 'submitted' | 'accepted'; now: Date },
): Promise<boolean> {
  const [moved] = await tx`
    update subaccount_transfers set state = 'done', transaction_id = ${s.transactionId}, completed_at = ${s.now},
      reason = null, updated_at = now()
    where id = ${transferId} and state = ${s.from} returning id`
  return moved !== undefined
}

/**
 * A settled conversion movement: submitted / accepted (`from` only) → done, in the transaction of the
 * round's step (a concurrent pass finds it moved and records nothing).
 */
export async function markConversionTransferDone(
  tx: Queryable,
  transferId: string,
  s: { transactionId: string; from: 'submitted' | 'accepted' },
): Promise<boolean> {
  const [moved] = await tx`
    update subaccount_transfers set state = 'done', transaction_id = ${s.transactionId}, completed_at = now(),
      updated_at = now() where id = ${transferId} and state = ${s.from} returning id`
  return moved !== undefined
}

/**
 * A creation's top-up that failed (refused, reverted or expired unlanded: nothing moved) is still owed: failed →
 * submitted with a freshly signed action, stored before it is sent; undefined when another run moved the row.
 */
export async function resignTopUp(
  sql: Sql,
  transferId: string,
  action: SignedTransfer,
  submittedAt: Date,
): Promise<TransferRow | undefined> {
  const [row] = await sql.unsafe<TransferRow[]>(
    `update subaccount_transfers set state = 'submitted', method = $1, params = $2::text::jsonb, nonce = $3,
       submitted_at = $4, transaction_id = null, completed_at = null, updated_at = now()
     where id = $5 and kind = 'top_up' and state = 'failed'
     returning ${TRANSFER_COLUMNS}`,
    [action.method, JSON.stringify(action.params), String(action.params.nonce), submittedAt, transferId],
  )
  return row
}

/** A settled top-up: submitted / accepted (`from` only) → done; no event, the funding's booked its cost already. */
export async function markTopUpDone(
  tx: Queryable,
  transferId: string,
  s: { transactionId: string; from: 'submitted' | 'accepted'; now: Date },
): Promise<boolean> {
  const [moved] = await tx`
    update subaccount_transfers set state = 'done', transaction_id = ${s.transactionId}, completed_at = ${s.now},
      reason = null, updated_at = now()
    where id = ${transferId} and kind = 'top_up' and state = ${s.from} returning id`
  return moved !== undefined
}

/** submitted / accepted → failed: a movement refused, reverted or expired unlanded (the reason as given). */
export async function markMovementFailed(sql: Sql, transferId: string, reason: string, now: Date): Promise<void> {
  await sql`update subaccount_transfers set state = 'failed', reason = ${reason}, completed_at = ${now},
    updated_at = now() where id = ${transferId} and state in ('submitted', 'accepted')`
}

/**
 * What movements not settled yet will still take out of the platform's funding subaccount, in base units of
 * `currency`: fundings reserved, signed or accepted (a creation's signed amount, which carries the fee cap on
 * top, when it is the larger) and creation top-ups not done. Counted whole even where the exchange has
 * already debited one, so what the funding subaccount has left for anything else is never overstated.
 */
export async function fundingSubaccountClaims(sql: Queryable, currency: string, decimals: number): Promise<bigint> {
  const [row] = await sql<{ v: string }[]>`
    select coalesce(sum(greatest(amount, coalesce(ceil((params->>'amount')::numeric * power(10::numeric, ${decimals}::int)), 0))), 0)::text as v
    from subaccount_transfers
    where currency = ${currency}
      and ((kind = 'fund' and state in ('reserved', 'submitted', 'accepted')) or (kind = 'top_up' and state <> 'done'))`
  return BigInt(row?.v ?? '0')
}
