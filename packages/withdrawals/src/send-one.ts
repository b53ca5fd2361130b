/**
 * One withdrawal sent now: what the worker's `withdrawal.send` job runs once POST /withdrawals has
 * committed the row (docs/architecture.md "Accepted work: one job per 202"). The same steps as a
 * round of the `withdrawals-send` tick (send.ts) for that one row: a destination that is the
 * platform's own is refused, the chain must answer as itself, then `processOne` signs, records,
 * broadcasts and settles it under the row's lock (FOR UPDATE SKIP LOCKED: a tick running the same
 * row at the same moment takes it, and this one skips). The tick stays the sweeper of every row a
 * job did not finish.
 */
import type { ChainName } from '@wh/wallet'
import {
  type DueRow,
  processOne,
  refuseOwnDestinations,
  type WithdrawalSendDeps,
  type WithdrawalSendOutcome,
} from './send'
import { errorText } from './send-verdict'

export interface WithdrawalSendResult {
  /**
   * what happened to the row; `absent` when there is no row by that id, or it is no longer
   * requested (sent, failed, held for an operator): nothing was done. `not_due`: it waits out the
   * backoff of an earlier failure (fair queue, docs/hostile-world.md), until `retryAt`
   */
  readonly outcome: WithdrawalSendOutcome | 'absent' | 'not_due'
  /** the row's reason code when it failed (the user's to read), or why the send must wait */
  readonly code?: string
  /** when the row is due again (its backoff), for a send that must wait */
  readonly retryAt?: Date
}

interface OneRow extends DueRow {
  next_attempt_at: Date
  due: boolean
}

/**
 * Sends the withdrawal `id` now if it is requested and due; never throws for the chain's or the
 * user's failures (they are the outcome), only for the database's.
 *
 * @example
 *   const r = await sendWithdrawal(withdrawalSendDeps(deps, log), withdrawalId)
 *   if (r.outcome === 'failed') throw new UnrecoverableError(r.code)
 */
export async function sendWithdrawal(deps: WithdrawalSendDeps, id: string): Promise<WithdrawalSendResult> {
  const row = await rowOf(deps, id)
  if (!row) return { outcome: 'absent' }
  if (!row.due) return { outcome: 'not_due', retryAt: row.next_attempt_at }
  if ((await refuseOwnDestinations(deps, [row])).size > 0) return { outcome: 'failed', code: 'PLATFORM_ADDRESS' }
  const chain = (row.chain ?? '') as ChainName
  const ready = await (deps.chainReady?.(chain) ?? Promise.resolve(true)).catch((err: unknown) => {
    deps.log.warn({ chain, err: errorText(err) }, 'withdrawals: the chain RPC is not this chain')
    return false
  })
  if (!ready) return { outcome: 'errors', code: 'RPC_UNAVAILABLE' }
  try {
    const { outcome, retry } = await processOne(deps, id)
    if (outcome === 'failed') return { outcome, code: (await rowOf(deps, id, true))?.last_error_code ?? 'FAILED' }
    if (outcome !== 'errors') return { outcome }
    return { outcome, code: retry?.code ?? 'SEND_ERROR', retryAt: (await rowOf(deps, id))?.next_attempt_at }
  } catch (err) {
    // after the outbox has a row (a broadcast or the confirmation's reads failed): the transaction is
    // out there and the row keeps its place; the next try re-broadcasts those very bytes (send.ts)
    deps.log.warn({ withdrawalId: id, chain, err: errorText(err) }, 'withdrawal send failed')
    return { outcome: 'errors', code: 'RPC_UNAVAILABLE' }
  }
}

/** The row while it is requested and not held (`any`: in whatever state, for its failure code). */
async function rowOf(
  deps: WithdrawalSendDeps,
  id: string,
  any = false,
): Promise<(OneRow & { last_error_code: string | null }) | undefined> {
  const [row] = await deps.sql<(OneRow & { last_error_code: string | null })[]>`
    select id, chain, destination, tx_hash, next_attempt_at, next_attempt_at <= now() as due, last_error_code
    from withdrawals
    where id = ${id} and (${any} or (state = 'requested' and held_at is null))`
  return row
}
