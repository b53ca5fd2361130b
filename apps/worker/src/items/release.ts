/**
 * `release.run` (queue `treasury`, under the exchange cycle lock like the release tick): the
 * release POST /subaccounts/:asset/release committed, planned now and its withdrawals sent
 * (@wh/subaccounts `processReleaseById`). A release that waits (positions live, a funding in flight) or whose
 * withdrawals are settling is the release tick's to follow; one that ends `failed` fails the job
 * with its reason.
 */
import { processReleaseById } from '@wh/subaccounts'
import { UnrecoverableError } from 'bullmq'
import type { TickDefinition } from '../ticks'
import { LEFT_TO_TICK, rowIdFor, underCycleLock } from './defer'

export const releaseRunProcessor: TickDefinition = {
  name: 'release.run',
  queue: 'treasury',
  process: async (job, ctx, token) => {
    const releaseId = rowIdFor('release.run', job)
    const ran = await underCycleLock(ctx, job, token, () =>
      processReleaseById({ ...ctx.deps, log: ctx.log }, releaseId),
    )
    const [r] = await ctx.deps.sql<{ state: string; reason: string | null }[]>`
      select state, reason from subaccount_releases where id = ${releaseId}`
    ctx.log.info({ job: job.name, releaseId, state: r?.state }, 'release job')
    if (r?.state === 'failed') throw new UnrecoverableError((r.reason ?? 'FAILED').slice(0, 200))
    return { releaseId, state: r?.state ?? 'absent', ...(ran === LEFT_TO_TICK && ran) }
  },
}
