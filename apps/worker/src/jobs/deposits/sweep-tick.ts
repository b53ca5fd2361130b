/**
 * The sweep tick (queue `deposits`): takes a bounded batch of deposits not swept yet and fans out
 * one `deposit-sweep` job per deposit. The job id is the deposit's, so while a deposit's job waits
 * or retries the tick adds no second one; jobs are removed when done, so the next period can add
 * it again while the sweep is still pending on chain. Exactly-once does not rest on this: the
 * outbox and the journal's keys make a doubled job harmless.
 */
import { jobId, QUEUES } from '@wh/jobs'
import type { TickDefinition } from '../../ticks'
import { DEPOSIT_SWEEP_JOB, SWEEPABLE_STATES } from './sweep'

export const DEPOSIT_SWEEP_EVERY_MS = 10_000
/** Deposits fanned out per tick. */
export const DEPOSIT_SWEEP_BATCH = 200
export const DEPOSIT_SWEEP_ATTEMPTS = 3
export const DEPOSIT_SWEEP_BACKOFF_MS = 5_000

export const depositSweepTick: TickDefinition = {
  name: 'deposits-sweep',
  queue: 'deposits',
  everyMs: DEPOSIT_SWEEP_EVERY_MS,
  process: async (_job, ctx) => {
    const rows = await ctx.deps.sql<{ id: string }[]>`
      select id from deposits where state in ${ctx.deps.sql([...SWEEPABLE_STATES])}
      order by created_at limit ${DEPOSIT_SWEEP_BATCH}
    `
    const queue = ctx.queues.get('deposits')
    if (!queue) throw new Error(`queue ${QUEUES.deposits} missing`)
    await queue.addBulk(
      rows.map((r) => ({
        name: DEPOSIT_SWEEP_JOB,
        data: { depositId: r.id },
        opts: {
          jobId: jobId(DEPOSIT_SWEEP_JOB, r.id),
          attempts: DEPOSIT_SWEEP_ATTEMPTS,
          backoff: { type: 'exponential', delay: DEPOSIT_SWEEP_BACKOFF_MS },
          removeOnComplete: true,
          removeOnFail: true,
        },
      })),
    )
    return { enqueued: rows.length }
  },
}
