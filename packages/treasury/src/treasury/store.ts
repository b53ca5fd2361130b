/**
 * The treasury's withdrawals (table treasury_withdrawals, migrations 0022, 0023; docs/chains.md "Treasury"):
 * the only writer of the table. A row is inserted with its signed action before anything is sent,
 * at most one is open per chain (a unique index refuses a second), and each state change names the
 * state it leaves, so two runs cannot both move one row.
 */
import type { SignedL1Withdrawal } from '@wh/exchange'
import type { Queryable } from '@wh/ledger'

export type TreasuryState = 'signed' | 'sent' | 'paid' | 'failed'

export interface TreasuryRow {
  id: string
  chain: string
  currency: string
  /** base units, as text */
  amount: string
  state: TreasuryState
  params: SignedL1Withdrawal
  op_uuid: string | null
  l1_tx_hash: string | null
  /** the outbox ids its settling transaction paid or queued to the hot wallet, once final (0023) */
  outbox_ids: string[] | null
  fee: string | null
  reason: string | null
  created_at: Date
}

const COLUMNS = 'id, chain, currency, amount, state, params, op_uuid, l1_tx_hash, outbox_ids, fee, reason, created_at'

/** Per currency, what the open withdrawals (signed or sent) take out of the funding subaccount, in base units. */
export async function openWithdrawalTotals(sql: Queryable): Promise<Map<string, bigint>> {
  const rows = await sql.unsafe<{ currency: string; total: string }[]>(
    `select currency, sum(amount)::text as total from treasury_withdrawals
     where state in ('signed', 'sent') group by currency`,
  )
  return new Map(rows.map((r) => [r.currency, BigInt(r.total)]))
}

/** The chain's open withdrawal (signed or sent), if any. */
export async function openWithdrawal(sql: Queryable, chain: string): Promise<TreasuryRow | undefined> {
  const [row] = await sql.unsafe<TreasuryRow[]>(
    `select ${COLUMNS} from treasury_withdrawals where chain = $1 and state in ('signed', 'sent') limit 1`,
    [chain],
  )
  return row
}

/** Whether another row than `id` already names the exchange's operation `opUuid` (a landed send is claimed once). */
export async function opUuidTaken(sql: Queryable, opUuid: string, id: string): Promise<boolean> {
  const rows = await sql`select 1 from treasury_withdrawals where op_uuid = ${opUuid} and id <> ${id} limit 1`
  return rows.length > 0
}

/** Stores a signed withdrawal before it is sent; refused (unique index) while the chain has one open. */
export async function insertSigned(
  sql: Queryable,
  w: { chain: string; currency: string; amount: bigint; params: SignedL1Withdrawal },
): Promise<TreasuryRow> {
  const [row] = await sql.unsafe<TreasuryRow[]>(
    `insert into treasury_withdrawals (chain, currency, amount, state, params)
     values ($1, $2, $3, 'signed', $4::text::jsonb) returning ${COLUMNS}`,
    [w.chain, w.currency, w.amount.toString(), JSON.stringify(w.params)],
  )
  if (!row) throw new Error('treasury withdrawal not stored')
  return row
}

/** The exchange accepted it: its operation uuid. */
export async function markSent(sql: Queryable, id: string, opUuid: string): Promise<void> {
  await sql`
    update treasury_withdrawals set state = 'sent', op_uuid = ${opUuid}, updated_at = now()
    where id = ${id} and state = 'signed'`
}

/** Paid on L1 and journaled (called in the journal's transaction). */
export async function markPaid(
  sql: Queryable,
  id: string,
  p: { l1TxHash: string; fee: bigint; outboxIds: readonly string[] },
): Promise<void> {
  await sql`
    update treasury_withdrawals set state = 'paid', l1_tx_hash = ${p.l1TxHash}, fee = ${p.fee.toString()},
      outbox_ids = ${[...p.outboxIds]}::text[], updated_at = now()
    where id = ${id} and state = 'sent'`
}

/** Refused or reverted: nothing moved, the next run may sign a new one. */
export async function markFailed(sql: Queryable, id: string, reason: string): Promise<void> {
  await sql`
    update treasury_withdrawals set state = 'failed', reason = ${reason}, updated_at = now()
    where id = ${id} and state in ('signed', 'sent')`
}

/**
 * The outbox queued (part of) a sent withdrawal: its ids, from the final settling transaction, and why it
 * waits; true the first time (so an operator is told once that the throttle queued it, not every run).
 */
export async function noteQueued(
  sql: Queryable,
  id: string,
  p: { outboxIds: readonly string[]; reason: string },
): Promise<boolean> {
  const changed = await sql`
    update treasury_withdrawals set outbox_ids = ${[...p.outboxIds]}::text[], reason = ${p.reason}, updated_at = now()
    where id = ${id} and state = 'sent' and outbox_ids is null
    returning id`
  return changed.length > 0
}

/** Notes why an open row waits; true when the reason is new (so an operator is told once, not every run). */
export async function noteProblem(sql: Queryable, id: string, reason: string): Promise<boolean> {
  const changed = await sql`
    update treasury_withdrawals set reason = ${reason}, updated_at = now()
    where id = ${id} and state in ('signed', 'sent') and reason is distinct from ${reason}
    returning id`
  return changed.length > 0
}
