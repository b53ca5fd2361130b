/**
 * `release.run` (queue `treasury`, under the exchange cycle lock like the release tick): the
 * release POST /subaccounts/:asset/release committed, planned now and its withdrawals sent
 * (release.ts `releaseOne`). A release that waits (positions live, a funding in flight) or whose
 * withdrawals are settling is the release tick's to follow; one that ends `failed` fails the job
 * with its reason.
 */
import { UnrecoverableError } from 'bullmq'
import { releaseOne } from '../jobs/exchange/release'
import type { TickDefinition } from '../ticks'
import { rowIdFor, underCycleLock } from './defer'

export const releaseRunProcessor: TickDefinition = {
  name: 'release.run',
  queue: 'treasury',
  process: async (job, ctx, token) => {
    const releaseId = rowIdFor('release.run', job)
    const summary = await underCycleLock(ctx, job, token, () => releaseOne({ ...ctx.deps, log: ctx.log }, releaseId))
    const [r] = await ctx.deps.sql<{ state: string; reason: string | null }[]>`
      select state, reason from subaccount_releases where id = ${releaseId}`
    ctx.log.info({ job: job.name, releaseId, state: r?.state }, 'release job')
    if (r?.state === 'failed') throw new UnrecoverableError((r.reason ?? 'FAILED').slice(0, 200))
    return { releaseId, state: r?.state ?? 'absent', ...('outcome' in summary && summary) }
  },
}
