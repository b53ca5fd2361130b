/**
 * `withdrawal.send` (queue `withdrawals`): the withdrawal POST /withdrawals committed, sent now by
 * @wh/withdrawals `sendWithdrawalNow` on the tick's own wiring (send-deps.ts `withdrawalSendDeps`).
 * A withdrawal the destination or the chain refuses ends `failed` with its reason code, and the job
 * fails with that code (UnrecoverableError: a decided failure is not retried). One that must wait
 * (the RPC down, the hot wallet short: the row's own backoff) or is broadcast and not yet confirmed
 * comes back shortly; the `withdrawals-send` tick sweeps whatever a job leaves.
 */
import { sendWithdrawalNow, withdrawalSendDeps } from '@wh/withdrawals'
import { UnrecoverableError } from 'bullmq'
import type { TickDefinition } from '../ticks'
import { comeBackLater, rowIdFor } from './defer'

export const withdrawalSendProcessor: TickDefinition = {
  name: 'withdrawal.send',
  queue: 'withdrawals',
  process: async (job, ctx, token) => {
    const withdrawalId = rowIdFor('withdrawal.send', job)
    const r = await sendWithdrawalNow(withdrawalSendDeps(ctx.deps, ctx.log), withdrawalId)
    ctx.log.info({ job: job.name, withdrawalId, outcome: r.outcome, code: r.code }, 'withdrawal job')
    if (r.outcome === 'failed') throw new UnrecoverableError(r.code ?? 'FAILED')
    if (r.outcome === 'pending') return comeBackLater(job, token, 'the transaction to be confirmed')
    if (r.outcome === 'errors' || r.outcome === 'not_due')
      return comeBackLater(job, token, r.code ?? 'its backoff', r.retryAt?.getTime())
    return { withdrawalId, outcome: r.outcome }
  },
}
