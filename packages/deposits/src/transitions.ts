/**
 * Every write of a `deposits` row (docs/chains.md "The watch tick", "Sweeps"), one named function
 * per transition: detected (the scan, the audit's traced transfers) → sweeping → swept; failed
 * (an operator retries: retry → detected again); the sweep queue's place, backoff and hold.
 *
 * Crash safety rests on each statement's guard, so each transition is one statement, or one
 * transaction with the journal where the state and its events must commit together
 * (`markSweepFailed`, `markSwept`), or one step of the caller's transaction where the caller's
 * lock must span it (`recordDetected`: the scan's cursor, the audit's episodes). A guard that no
 * longer matches (a replica got there first, the row moved on) changes nothing.
 */
import type { Queryable, Sql } from '@wh/db'
import { retryDelayMs } from '@wh/jobs'
import { appendBatch, type EventInput, MAX_BATCH_EVENTS } from '@wh/ledger'
import { feePaidWei, type OutboundRecord } from '@wh/wallet'
import type { DepositRow, NewDeposit } from './rows'

export interface Detected {
  /** the deposits this call inserted (a replay inserts none), with their amounts */
  inserted: { address: string; amount: string }[]
  /** `deposit_detected` events appended now, and those already in the journal (a replay) */
  detected: number
  duplicates: number
}

/**
 * → detected: the deposits and their `deposit_detected` events, in the caller's transaction (the
 * scan's, which moves its cursor in the same commit; the audit's, which holds its episodes' locks).
 * Exactly once: a deposit recorded before meets the unique (chain, tx_hash, log_index) and the
 * journal's key `tx:{chain}:{txHash}:{logIndex}`, and changes nothing.
 */
export async function recordDetected(tx: Queryable, rows: readonly NewDeposit[]): Promise<Detected> {
  if (rows.length === 0) return { inserted: [], detected: 0, duplicates: 0 }
  const inserted = await tx<{ address: string; amount: string }[]>`
    insert into deposits (chain, tx_hash, log_index, block_number, user_id, hd_index, address, token, amount, state)
    select chain, tx_hash, log_index, block_number, user_id, hd_index, address, token, amount, 'detected'
    from jsonb_to_recordset(${tx.json(rows as NewDeposit[])}::jsonb) as x(chain text, tx_hash text, log_index bigint,
      block_number bigint, user_id uuid, hd_index integer, address text, token text, amount numeric)
    on conflict (chain, tx_hash, log_index) do nothing
    returning address, amount::text`
  const occurredAt = new Date()
  const events: EventInput[] = rows.map((r) => ({
    type: 'deposit_detected',
    payload: {
      userId: r.user_id,
      chain: r.chain,
      txHash: r.tx_hash,
      logIndex: r.log_index,
      currency: r.token,
      amount: BigInt(r.amount),
    },
    occurredAt,
  }))
  let detected = 0
  let duplicates = 0
  for (let i = 0; i < events.length; i += MAX_BATCH_EVENTS) {
    for (const a of await appendBatch(tx, events.slice(i, i + MAX_BATCH_EVENTS))) {
      if (a.duplicate) duplicates++
      else detected++
    }
  }
  return { inserted: [...inserted], detected, duplicates }
}

/** detected / retry → sweeping: the attempt's sweep transaction is in the outbox. */
export async function markSweepSent(sql: Queryable, depositId: string): Promise<void> {
  await sql`update deposits set state = 'sweeping', updated_at = now() where id = ${depositId} and state in ('detected', 'retry')`
}

/**
 * retry → detected: the retried deposit's new attempt has a transaction, so from then on a failed
 * transaction of that attempt is a new failure to process, not the reason for another attempt.
 */
export async function markRetryStarted(sql: Queryable, depositId: string): Promise<void> {
  await sql`update deposits set state = 'detected', updated_at = now() where id = ${depositId} and state = 'retry'`
}

/**
 * failed → retry, an operator's decision: the next run starts a new attempt. Returns whether the
 * deposit was `failed` (and moved).
 */
export async function markSweepRetry(sql: Queryable, depositId: string): Promise<boolean> {
  const rows = await sql`
    update deposits set state = 'retry', updated_at = now() where id = ${depositId} and state = 'failed' returning id`
  return rows.length > 0
}

/** A sweep transaction's fee as `gas_spent`: attributed to the user, borne by the platform. */
export const sweepGasEvent = (d: DepositRow, r: OutboundRecord, slot: 0 | 1, occurredAt: Date): EventInput => ({
  type: 'gas_spent',
  payload: { chain: d.chain, txHash: r.txHash, slot, currency: 'ETH', amount: feePaidWei(r), userId: d.user_id },
  occurredAt,
})

/**
 * → failed, a transaction of the attempt failed on chain: the attempt's burnt gas (`gasEvents`,
 * each mined transaction's `gas_spent` at slot 0) in one commit with the move. Returns whether
 * this call moved it (a deposit already failed is left alone: the caller alerts once).
 */
export async function markSweepFailed(sql: Sql, depositId: string, gasEvents: readonly EventInput[]): Promise<boolean> {
  const moved = await sql.begin(async (tx) => {
    if (gasEvents.length > 0) await appendBatch(tx, gasEvents as EventInput[])
    return tx`update deposits set state = 'failed', updated_at = now() where id = ${depositId} and state <> 'failed' returning id`
  })
  return moved.length > 0
}

/**
 * sweeping → swept, with the journal, in one commit: `deposit_swept` (no postings, slot 0 of the
 * sweep), the sweep's fee as `gas_spent` (slot 1 of the same transaction) and each top-up's fee as
 * `gas_spent` (slot 0 of the top-up: its only event).
 */
export async function markSwept(
  sql: Sql,
  d: DepositRow,
  sweep: OutboundRecord,
  sweptAmount: bigint,
  topups: readonly OutboundRecord[],
): Promise<void> {
  const occurredAt = new Date()
  const events: EventInput[] = [
    {
      type: 'deposit_swept',
      payload: { userId: d.user_id, chain: d.chain, txHash: sweep.txHash, currency: d.token, amount: sweptAmount },
      occurredAt,
    },
    sweepGasEvent(d, sweep, 1, occurredAt),
    ...topups.map((t) => sweepGasEvent(d, t, 0, occurredAt)),
  ]
  await sql.begin(async (tx) => {
    await appendBatch(tx, events)
    await tx`update deposits set state = 'swept', updated_at = now() where id = ${d.id}`
  })
}

/** Back in the sweep queue behind the deposits not served yet (in flight: polled again next tick). */
export async function requeueSweep(sql: Queryable, depositId: string): Promise<void> {
  await sql`update deposits set next_attempt_at = now() where id = ${depositId}`
}

/**
 * A sweep attempt that could not go on (`code`): the attempt recorded, then the wait, `delayMs` or
 * retryDelayMs(attempts) on the database's clock.
 */
export async function recordSweepAttempt(
  sql: Queryable,
  depositId: string,
  code: string,
  delayMs?: number,
): Promise<void> {
  const [row] = await sql<{ attempts: number }[]>`
    update deposits set attempts = attempts + 1, last_error_code = ${code} where id = ${depositId} returning attempts`
  const waitMs = delayMs ?? retryDelayMs(row?.attempts ?? 1)
  await sql`update deposits set next_attempt_at = now() + make_interval(secs => ${waitMs / 1000}) where id = ${depositId}`
}

/**
 * ETH deposits of `chain` at or below `thresholdWei` (too small to pay their own sweep) set aside
 * in one update: BELOW_SWEEP_GAS, looked at again after `retryMs`, at most `limit` of them.
 * Returns how many.
 */
export async function setDustAside(
  sql: Queryable,
  chain: string,
  thresholdWei: bigint,
  bounds: { retryMs: number; limit: number },
): Promise<number> {
  const rows = await sql`
    update deposits set attempts = attempts + 1, last_error_code = 'BELOW_SWEEP_GAS',
      next_attempt_at = now() + make_interval(secs => ${bounds.retryMs / 1000})
    where id in (
      select id from deposits
      where chain = ${chain} and token = 'ETH' and amount <= ${thresholdWei.toString()}::numeric
        and state in ('detected', 'retry') and held_at is null and next_attempt_at <= now()
      limit ${bounds.limit})
    returning id`
  return rows.length
}

/** Held for an operator (a transaction of its sweep is held): the deposit leaves the sweep queue. */
export async function holdDeposit(sql: Queryable, depositId: string): Promise<void> {
  await sql`
    update deposits set held_at = now(), hold_reason = 'a transaction of its sweep is held for an operator',
      last_error_code = 'HELD'
    where id = ${depositId} and held_at is null`
}

/**
 * An operator decided the held transaction it waited on (@wh/ops resolveHeld): the deposit returns
 * to the sweep queue, due now.
 */
export async function releaseHeldDeposit(sql: Queryable, depositId: string): Promise<void> {
  await sql`
    update deposits set held_at = null, hold_reason = null, next_attempt_at = now(), updated_at = now()
    where id = ${depositId}::uuid and held_at is not null`
}
