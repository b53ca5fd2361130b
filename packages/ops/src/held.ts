/**
 * Transactions held for an operator (docs/hostile-world.md "Never pay twice"): the outbox holds a
 * transaction when the chain's answers contradict each other, and the withdrawal or deposit that
 * waits on it is held with it (its reserve kept). An operator looks at the evidence (an explorer,
 * a second provider) and decides:
 * - `recheck`: the provider was at fault; the next confirmation reads the chain afresh, and the
 *   business row returns to its queue;
 * - `failed`: another transaction provably took the nonce and this one can never be mined. The
 *   chain is read again first (wallet's readHeldEvidence): a nonce not yet used at confirmed depth,
 *   a version with a receipt, or a block showing our own version took the nonce refuses it; the
 *   transaction that took it is recorded as the proof. The business row returns to its queue, whose tick then
 *   ends it (a withdrawal fails and its reserve is released; a sweep fails with an alert);
 * - `mined` (marked sent): one of its versions has a final receipt the chain shows (read again);
 *   it is settled on that receipt, and the business row's tick books it as sent.
 * `failed` and `mined` release money: they run as approved proposals (proposals.ts, four eyes).
 *
 * A decision is one database transaction: the outbox row, the operator's record and the release of
 * the business row commit together, and repeating it completes a release an older crash left behind.
 */
import { AppError } from '@wh/core'
import type { Queryable, Sql } from '@wh/db'
import { releaseHeldDeposit } from '@wh/deposits'
import {
  type ChainClients,
  type ChainName,
  type HeldEvidence,
  type HeldVerdict,
  OutboundNotHeldError,
  type OutboundRecord,
  readHeldEvidence,
  resolveHeldOutbound,
} from '@wh/wallet'
import { releaseHeldWithdrawal } from '@wh/withdrawals'
import type { Hex } from 'viem'
import { lastOperatorAction, recordOperatorAction } from './actions'

export interface HeldTransaction {
  id: string
  chain: string
  purpose: string
  ref_id: string
  nonce: string
  tx_hash: string
  contradictions: number
  hold_reason: string | null
  updated_at: Date
}

/** Every held transaction, oldest first (at most 1,000). */
export async function listHeld(sql: Queryable): Promise<HeldTransaction[]> {
  return sql<HeldTransaction[]>`
    select id, chain, purpose, ref_id, nonce::text, tx_hash, contradictions, hold_reason, updated_at
    from outbound_txs where state = 'held' order by updated_at limit 1000`
}

/** What waits on an operator because of a hold: held transactions, and the withdrawals and deposits held with them. */
export async function heldCounts(
  sql: Queryable,
): Promise<{ transactions: number; withdrawals: number; deposits: number }> {
  const [row] = await sql<{ t: string; w: string; d: string }[]>`
    select (select count(*) from outbound_txs where state = 'held')::text as t,
      (select count(*) from withdrawals where held_at is not null)::text as w,
      (select count(*) from deposits where held_at is not null)::text as d`
  return { transactions: Number(row?.t ?? 0), withdrawals: Number(row?.w ?? 0), deposits: Number(row?.d ?? 0) }
}

const ACTION_OF: Readonly<Record<HeldVerdict, 'outbound_rechecked' | 'outbound_failed' | 'outbound_marked_sent'>> = {
  recheck: 'outbound_rechecked',
  failed: 'outbound_failed',
  mined: 'outbound_marked_sent',
}

export interface HeldDecisionResult {
  readonly record: Pick<OutboundRecord, 'id' | 'state' | 'txHash'>
  /** the same decision had been taken before: nothing changed but a release left behind */
  readonly alreadyDone: boolean
}

/** The read-only client of `chain` from the desk's or the CLI's clients. */
export function clientOf(clients: ReadonlyMap<ChainName, ChainClients>, chain: string): ChainClients {
  const c = clients.get(chain as ChainName)
  if (!c) throw new AppError({ code: 'CHAIN_NOT_CONFIGURED', statusCode: 409, message: `no client for ${chain}` })
  return c
}

/**
 * The chain's evidence for a verdict on held transaction `outboundId` (nothing for a recheck), read
 * outside any database transaction: it calls the chain.
 */
export async function heldEvidence(
  deps: { sql: Sql; clients: ReadonlyMap<ChainName, ChainClients> },
  outboundId: string,
  verdict: HeldVerdict,
  txHash?: Hex,
): Promise<HeldEvidence> {
  if (verdict === 'recheck') return { verdict }
  const [row] = await deps.sql<{ chain: string }[]>`select chain from outbound_txs where id = ${outboundId}`
  if (!row) throw new OutboundNotHeldError(outboundId)
  return readHeldEvidence({ sql: deps.sql, client: clientOf(deps.clients, row.chain) }, outboundId, verdict, txHash)
}

/**
 * The decision in the caller's transaction: the outbox row resolved on `evidence`, the decision
 * recorded with who and why, and the business row waiting on it released. A decision taken before
 * (the same one, last on record) answers `alreadyDone` and still releases a business row a crash
 * left held; a different one on a row no longer held is OutboundNotHeldError (409).
 */
export async function resolveHeldIn(
  tx: Queryable,
  outboundId: string,
  evidence: HeldEvidence,
  d: { reason: string; actor: string; details?: Record<string, unknown> },
): Promise<HeldDecisionResult> {
  const action = ACTION_OF[evidence.verdict]
  const record = await resolveHeldOutbound(tx, outboundId, evidence, d.reason)
  if (record)
    await recordOperatorAction(tx, {
      action,
      subject: outboundId,
      actor: d.actor,
      reason: d.reason,
      details: { txHash: record.txHash, nonce: record.nonce, ...evidenceDetails(evidence), ...d.details },
    })
  else if ((await lastOperatorAction(tx, outboundId))?.action !== action) throw new OutboundNotHeldError(outboundId)
  const [row] = await tx<{ purpose: string; ref_id: string; state: string; tx_hash: string }[]>`
    select purpose, ref_id, state, tx_hash from outbound_txs where id = ${outboundId}`
  if (row?.purpose === 'withdrawal') await releaseHeldWithdrawal(tx, row.ref_id)
  if (row?.purpose === 'sweep' || row?.purpose === 'gas_topup') await releaseHeldDeposit(tx, row.ref_id)
  return {
    record: { id: outboundId, state: (row?.state ?? 'held') as OutboundRecord['state'], txHash: row?.tx_hash as Hex },
    alreadyDone: record === undefined,
  }
}

function evidenceDetails(e: HeldEvidence): Record<string, unknown> {
  if (e.verdict === 'failed')
    return {
      nonceAtDepth: e.nonceAtDepth,
      checkedBlock: e.block.toString(),
      takenBy: e.takenBy.hash,
      takenInBlock: e.takenBy.blockNumber.toString(),
    }
  if (e.verdict === 'mined')
    return { minedHash: e.version.tx_hash, block: e.receipt.blockNumber.toString(), status: e.receipt.status }
  return {}
}

/**
 * A recheck (one operator may take it: it releases nothing, the chain is read afresh), in one
 * transaction. The verdicts that release money go through a proposal (proposals.ts).
 *
 * @example
 *   await recheckHeld(sql, id, { reason: 'the provider served a stale backend', actor: 'alice' })
 */
export async function recheckHeld(
  sql: Sql,
  outboundId: string,
  d: { reason: string; actor: string },
): Promise<HeldDecisionResult> {
  return sql.begin((tx) => resolveHeldIn(tx, outboundId, { verdict: 'recheck' }, d))
}
