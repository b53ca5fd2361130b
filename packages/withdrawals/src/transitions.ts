/**
 * How a withdrawal moves after its request (docs/chains.md "Withdrawals", "States"): the writes of
 * the send (send.ts) and of an operator's decision on a held transaction (@wh/ops held.ts).
 *
 * The send takes a row with `claimForSend` in a transaction of its own and keeps the row's lock
 * until it commits, across the outbox's send and confirmation: every transition below that takes a
 * `tx` runs in that transaction (so a replica never works on the same row, and `markSent` moves the
 * row in the commit that journals `withdrawal_sent`). The others are one statement each.
 */
import type { Queryable, Sql } from '@wh/db'
import { retryDelayMs } from '@wh/jobs'
import { appendBatch, type EventInput } from '@wh/ledger'
import { recentFailuresOf } from './cooling'

/** Why a withdrawal failed, as the user reads it in GET /withdrawals; the key is its last_error_code. */
export const FAILURE_REASONS = {
  DESTINATION_REFUSED:
    'the destination refused the transfer: a dry run of it reverts (a contract that does not accept this asset, or an address the token blocks); nothing was sent',
  DESTINATION_GAS_ABOVE_BUDGET:
    'the destination needs more gas to receive this payment than a withdrawal to a contract may spend (50,000); nothing was sent',
  CONTRACT_DESTINATIONS_COOLING:
    'two withdrawals of this account failed on chain in the last 24 hours: withdrawals to contract addresses wait until then; nothing was sent',
  PLATFORM_ADDRESS: 'the destination is an address of this service',
  REVERTED:
    'the transfer failed on chain when it was mined (the destination or the token refused it); nothing was withdrawn',
  REVERTED_CHARGED:
    'the transfer failed on chain when it was mined (the destination refused it); its network fee was taken from the amount, the rest is available again',
  NOT_SENT:
    'the network refused the signed transfer for good; nothing was sent (its place in the queue was filled) and the amount is available again',
  SEND_ERROR: 'the network kept refusing this transfer; nothing was sent and the amount is available again',
  INCOMPLETE: 'incomplete request: no route or destination',
} as const
export type FailureCode = keyof typeof FAILURE_REASONS

/** What the send needs of a row it took. */
export interface ClaimedWithdrawal {
  id: string
  userId: string
  currency: string
  amount: string
  chain: string | null
  destination: string | null
  attempts: number
  /** preparations that failed with an unknown error while the chain answered (WITHDRAWAL_SEND_ERRORS_MAX) */
  sendErrors: number
  /** the user's withdrawals that failed on chain in the cooling window (cooling.ts) */
  recentFailures: number
}

/** A mined transaction of a withdrawal: its hash and fee (gas used × effective price, native base units). */
export interface MinedTransfer {
  chain: string
  txHash: string
  /** undefined when the receipt did not say */
  fee: bigint | undefined
  /** the chain's native token, which pays the gas */
  gasCurrency: string
}

/**
 * Locks a withdrawal that is still requested and not held, FOR UPDATE SKIP LOCKED: undefined when
 * another replica holds it or it left the queue. Call it inside the transaction the send commits.
 */
export async function claimForSend(tx: Queryable, id: string): Promise<ClaimedWithdrawal | undefined> {
  const [w] = await tx<ClaimedWithdrawal[]>`
    select id, user_id as "userId", currency, amount::text as amount, chain, destination, attempts,
      send_errors as "sendErrors", ${recentFailuresOf(tx)} as "recentFailures"
    from withdrawals w
    where id = ${id} and state = 'requested' and held_at is null
    for update of w skip locked`
  return w
}

/** requested → failed before anything was signed: the reserve is released, the reason is the user's to read. */
export async function markFailed(tx: Queryable, id: string, code: FailureCode, now: Date): Promise<void> {
  await tx`
    update withdrawals set state = 'failed', failure_reason = ${FAILURE_REASONS[code]}, last_error_code = ${code},
      attempts = attempts + 1, updated_at = ${now}
    where id = ${id}`
}

/**
 * requested → sent, with the journal: `withdrawal_sent` (key tx:{chain}:{txHash}:0, ownTxKey slot 0,
 * derived from the payload by the ledger) and its `gas_spent` at slot 1 (a second event about the
 * same transaction, spec 6.1), then the row with its hash, fee and sent_at, in the caller's
 * transaction: one commit takes the amount out of transit and out of the reserve.
 */
export async function markSent(tx: Queryable, w: ClaimedWithdrawal, t: MinedTransfer, now: Date): Promise<void> {
  const events: EventInput[] = [
    {
      type: 'withdrawal_sent',
      payload: {
        userId: w.userId,
        withdrawalId: w.id,
        chain: t.chain,
        txHash: t.txHash,
        currency: w.currency,
        amount: BigInt(w.amount),
      },
      occurredAt: now,
    },
  ]
  if (t.fee !== undefined && t.fee > 0n)
    events.push({
      type: 'gas_spent',
      payload: { chain: t.chain, txHash: t.txHash, slot: 1, currency: t.gasCurrency, amount: t.fee, userId: w.userId },
      occurredAt: now,
    })
  await appendBatch(tx, events)
  await tx`
    update withdrawals set state = 'sent', tx_hash = ${t.txHash.toLowerCase()},
      network_fee = ${t.fee === undefined ? null : t.fee.toString()}, sent_at = ${now}, updated_at = ${now},
      last_error_code = null
    where id = ${w.id}`
}

/**
 * requested → failed by a receipt that reverted: nothing left the hot wallet but gas, journaled as
 * its only event (`gas_spent`, slot 0); the reserve is released by the state change. `chargedWei`
 * (ETH withdrawals: the gas, at most the amount) is charged to the user in the same commit
 * (`withdrawal_gas_charged`, slot 1: docs/hostile-world.md "The user's failures are the user's").
 * A REVERTED row counts against the user's contract destinations (cooling.ts).
 */
export async function markReverted(
  tx: Queryable,
  w: ClaimedWithdrawal,
  t: MinedTransfer,
  now: Date,
  chargedWei = 0n,
): Promise<void> {
  const events: EventInput[] = []
  if (t.fee !== undefined && t.fee > 0n) events.push(gasEvent(w, t, now))
  if (chargedWei > 0n)
    events.push({
      type: 'withdrawal_gas_charged',
      payload: {
        userId: w.userId,
        withdrawalId: w.id,
        chain: t.chain,
        txHash: t.txHash,
        currency: w.currency,
        amount: chargedWei,
      },
      occurredAt: now,
    })
  if (events.length > 0) await appendBatch(tx, events)
  const reason = chargedWei > 0n ? FAILURE_REASONS.REVERTED_CHARGED : FAILURE_REASONS.REVERTED
  await tx`
    update withdrawals set state = 'failed', failure_reason = ${reason}, last_error_code = 'REVERTED',
      tx_hash = ${t.txHash.toLowerCase()}, network_fee = ${t.fee === undefined ? null : t.fee.toString()},
      updated_at = ${now}
    where id = ${w.id}`
}

/** The burnt gas of a transaction that is the withdrawal's only fact about it: slot 0. */
function gasEvent(w: ClaimedWithdrawal, t: MinedTransfer, now: Date): EventInput {
  return {
    type: 'gas_spent',
    payload: {
      chain: t.chain,
      txHash: t.txHash,
      slot: 0,
      currency: t.gasCurrency,
      amount: t.fee ?? 0n,
      userId: w.userId,
    },
    occurredAt: now,
  }
}

/**
 * requested → failed, never sent: the node refused the signed transfer for good and a no-op took
 * its nonce (docs/hostile-world.md "One policy for every outbound transaction"). Only once that
 * no-op is final: until then the original bytes could still be mined. Its gas is the platform's
 * (`gas_spent` slot 0 of the no-op, attributed to the user); nothing is charged and it does not
 * count against the user's destinations: nothing of theirs ran.
 */
export async function markNotSent(tx: Queryable, w: ClaimedWithdrawal, t: MinedTransfer, now: Date): Promise<void> {
  if (t.fee !== undefined && t.fee > 0n) await appendBatch(tx, [gasEvent(w, t, now)])
  await tx`
    update withdrawals set state = 'failed', failure_reason = ${FAILURE_REASONS.NOT_SENT}, last_error_code = 'NOT_SENT',
      tx_hash = ${t.txHash.toLowerCase()}, network_fee = ${t.fee === undefined ? null : t.fee.toString()},
      updated_at = ${now}
    where id = ${w.id}`
}

/**
 * Held for an operator (the chain contradicts itself about the transaction): the row keeps its
 * reserve and leaves the queue until `releaseHeldWithdrawal`.
 */
export async function markHeld(tx: Queryable, id: string, txHash: string, now: Date): Promise<void> {
  await tx`
    update withdrawals set held_at = ${now}, hold_reason = 'the chain contradicts itself about its transaction',
      tx_hash = ${txHash.toLowerCase()}, last_error_code = 'HELD', updated_at = ${now}
    where id = ${id}`
}

/** In flight (broadcast, not confirmed): the row stays requested with the hash GET /withdrawals shows. */
export async function recordBroadcast(tx: Queryable, id: string, txHash: string, now: Date): Promise<void> {
  await tx`update withdrawals set tx_hash = ${txHash.toLowerCase()}, updated_at = ${now} where id = ${id}`
}

/**
 * A preparation that failed for now (`code`: RPC_UNAVAILABLE, HOT_WALLET_SHORT): the attempt on the
 * row and its next try after retryDelayMs(attempts). Backoff runs on the database's clock, like the
 * rows' defaults: it is operations' time, the same for every replica, not the business clock of a tick.
 */
export async function recordAttempt(
  tx: Queryable,
  id: string,
  attempts: number,
  code: string,
  now: Date,
): Promise<void> {
  await tx`
    update withdrawals set attempts = ${attempts}, last_error_code = ${code},
      next_attempt_at = now() + make_interval(secs => ${retryDelayMs(attempts) / 1000}), updated_at = ${now}
    where id = ${id}`
}

/**
 * A preparation that failed with an error nobody recognises while the chain answered its probe:
 * the attempt and the row's count of such errors, then its backoff (recordAttempt's).
 */
export async function recordSendError(tx: Queryable, id: string, attempts: number, now: Date): Promise<void> {
  await tx`
    update withdrawals set attempts = ${attempts}, last_error_code = 'SEND_ERROR', send_errors = send_errors + 1,
      next_attempt_at = now() + make_interval(secs => ${retryDelayMs(attempts) / 1000}), updated_at = ${now}
    where id = ${id}`
}

/**
 * requested → failed (PLATFORM_ADDRESS), in one statement, for those of `ids` not yet sent whose
 * destination is the platform's own; a row broadcast or failed meanwhile is left alone.
 */
export async function failOwnDestinations(sql: Queryable, ids: readonly string[], now: Date): Promise<void> {
  if (ids.length === 0) return
  await sql`
    update withdrawals set state = 'failed', failure_reason = ${FAILURE_REASONS.PLATFORM_ADDRESS},
      last_error_code = 'PLATFORM_ADDRESS', updated_at = ${now}
    where id = any(${ids as string[]}::uuid[]) and state = 'requested' and tx_hash is null`
}

/**
 * An operator decided a held transaction (@wh/ops resolveHeld): the withdrawal waiting on it returns
 * to the queue, due now. Returns whether a held row was released.
 */
export async function releaseHeldWithdrawal(sql: Sql, id: string): Promise<boolean> {
  const rows = await sql`
    update withdrawals set held_at = null, hold_reason = null, next_attempt_at = now(), updated_at = now()
    where id = ${id}::uuid and held_at is not null
    returning id`
  return rows.length > 0
}
