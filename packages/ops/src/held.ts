/**
 * Transactions held for an operator (docs/hostile-world.md "Never pay twice"): the outbox holds a
 * transaction when the chain's answers contradict each other, and the withdrawal or deposit that
 * waits on it is held with it (its reserve kept). An operator looks at the evidence (an explorer,
 * a second provider) and decides:
 * - `recheck`: the provider was at fault; the next confirmation reads the chain afresh, and the
 *   business row returns to its queue;
 * - `failed`: another transaction provably took the nonce and this one can never be mined; the
 *   business row returns to its queue, whose tick then ends it (a withdrawal fails and its reserve
 *   is released; a sweep fails with an alert and waits for `retryFailedSweep`).
 */
import type { Sql } from '@wh/db'
import { releaseHeldDeposit } from '@wh/deposits'
import { type OutboundRecord, resolveHeldOutbound } from '@wh/wallet'
import { releaseHeldWithdrawal } from '@wh/withdrawals'
import { recordOperatorAction } from './actions'

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
export async function listHeld(sql: Sql): Promise<HeldTransaction[]> {
  return sql<HeldTransaction[]>`
    select id, chain, purpose, ref_id, nonce::text, tx_hash, contradictions, hold_reason, updated_at
    from outbound_txs where state = 'held' order by updated_at limit 1000`
}

/**
 * The operator's decision on held transaction `outboundId`, with their reason, and the business
 * row waiting on it released back to its queue.
 *
 * @example
 *   await resolveHeld(sql, id, 'recheck', 'the provider served a stale backend; receipt found on a second one')
 */
export async function resolveHeld(
  sql: Sql,
  outboundId: string,
  verdict: 'recheck' | 'failed',
  reason: string,
  actor?: string,
): Promise<OutboundRecord> {
  const record = await resolveHeldOutbound({ sql }, outboundId, verdict, reason)
  await recordOperatorAction(sql, {
    action: verdict === 'failed' ? 'outbound_failed' : 'outbound_rechecked',
    subject: outboundId,
    ...(actor !== undefined && { actor }),
    reason,
    details: { txHash: record.txHash, nonce: record.nonce },
  })
  const [row] = await sql<{ purpose: string; ref_id: string }[]>`
    select purpose, ref_id from outbound_txs where id = ${outboundId}`
  if (row?.purpose === 'withdrawal') await releaseHeldWithdrawal(sql, row.ref_id)
  if (row?.purpose === 'sweep' || row?.purpose === 'gas_topup') await releaseHeldDeposit(sql, row.ref_id)
  return record
}
