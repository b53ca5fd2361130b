/**
 * One withdrawal sent now: what the worker's `withdrawal.send` job runs once POST /withdrawals has
 * committed the row (docs/architecture.md "Accepted work: one job per 202"). It answers what a job
 * needs to know (gone, not due yet, the reason code of a failure, when to come back) around
 * `sendWithdrawal` (send.ts), the same send the `withdrawals-send` tick's round makes for each due
 * row: a destination that is the platform's own is refused, the chain must answer as itself, then
 * `processOne` signs, records, broadcasts and settles it under the row's lock (FOR UPDATE SKIP
 * LOCKED: a tick running the same row at the same moment takes it, and this one skips). The tick
 * stays the sweeper of every row a job did not finish.
 */
import { sendWithdrawal, type WithdrawalSendDeps, type WithdrawalSendOutcome } from './send'

export interface WithdrawalJobResult {
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

/**
 * The job's failure reason for a failed row without a code (every failure writes one today). Not an
 * answer of the API: GET /withdrawals reads the row's own code.
 */
const FAILED_WITHOUT_CODE = 'FAILED'

interface OneRow {
  next_attempt_at: Date
  due: boolean
  last_error_code: string | null
}

/**
 * Sends the withdrawal `id` now if it is requested and due; never throws for the chain's or the
 * user's failures (they are the outcome), only for the database's.
 *
 * @example
 *   const r = await sendWithdrawalNow(withdrawalSendDeps(deps, log), withdrawalId)
 *   if (r.outcome === 'failed') throw new UnrecoverableError(r.code)
 */
export async function sendWithdrawalNow(deps: WithdrawalSendDeps, id: string): Promise<WithdrawalJobResult> {
  const row = await rowOf(deps, id)
  if (!row) return { outcome: 'absent' }
  if (!row.due) return { outcome: 'not_due', retryAt: row.next_attempt_at }
  const { outcome, retry } = await sendWithdrawal(deps, id)
  if (outcome === 'failed')
    return { outcome, code: (await rowOf(deps, id, true))?.last_error_code ?? FAILED_WITHOUT_CODE }
  if (outcome !== 'errors') return { outcome }
  return { outcome, code: retry?.code ?? 'SEND_ERROR', retryAt: (await rowOf(deps, id))?.next_attempt_at }
}

/** The row while it is requested and not held (`any`: in whatever state, for its failure code). */
async function rowOf(deps: WithdrawalSendDeps, id: string, any = false): Promise<OneRow | undefined> {
  const [row] = await deps.sql<OneRow[]>`
    select next_attempt_at, next_attempt_at <= now() as due, last_error_code
    from withdrawals
    where id = ${id} and (${any} or (state = 'requested' and held_at is null))`
  return row
}
