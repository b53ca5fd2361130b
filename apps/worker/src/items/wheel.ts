/**
 * The wheel jobs (queue `trading`, under the exchange cycle lock like the wheel runner):
 *   `wheel.next-leg` (POST /wheels/:id/resume): the runner's turn for that wheel now (@wh/trading
 *     `turnWheel`), not at its next period; the leg it opens gets its own `position.advance`.
 *   `wheel.stop` (DELETE of a wheel or of its leg, answered `stopping`): the live leg's own step
 *     first (its orders cancelled, or its buy-back sent), then the runner's turn, which stops the
 *     wheel once no leg is live and no order of it rests.
 * A wheel that is absent, stopped or running with a live leg is left as it is.
 */
import { rowJob } from '@wh/jobs'
import { stepPosition, turnWheel } from '@wh/trading'
import type { Job } from 'bullmq'
import { tradingDepsOf } from '../jobs/trading/ticks'
import type { TickContext, TickDefinition } from '../ticks'
import { rowIdFor, underCycleLock } from './defer'

const depsOf = (ctx: TickContext) => tradingDepsOf(ctx.deps, ctx.log)

async function legOf(ctx: TickContext, wheelId: string): Promise<string | null> {
  const [w] = await ctx.deps.sql<{ current_position_id: string | null }[]>`
    select current_position_id from wheels where id = ${wheelId}`
  return w?.current_position_id ?? null
}

/** The leg the runner just opened gets its own job at once (funded and placed like any new position). */
async function advanceNewLeg(ctx: TickContext, job: Job, positionId: string): Promise<void> {
  const userId = String((job.data as { userId?: unknown }).userId ?? '')
  const requestId = (job.data as { requestId?: string }).requestId
  const next = rowJob('position.advance', positionId, userId, requestId)
  await ctx.queues.get(next.queue)?.add(next.name, next.data, next.opts)
}

export const wheelNextLegProcessor: TickDefinition = {
  name: 'wheel.next-leg',
  queue: 'trading',
  process: async (job, ctx, token) => {
    const wheelId = rowIdFor('wheel.next-leg', job)
    const steps = await underCycleLock(ctx, job, token, () => turnWheel(depsOf(ctx), wheelId))
    const opened = 'put_opened' in steps || 'call_opened' in steps
    const leg = opened ? await legOf(ctx, wheelId) : null
    if (leg) await advanceNewLeg(ctx, job, leg)
    ctx.log.info({ job: job.name, wheelId, steps, leg }, 'wheel job')
    return { wheelId, steps, ...(leg && { leg }) }
  },
}

export const wheelStopProcessor: TickDefinition = {
  name: 'wheel.stop',
  queue: 'trading',
  process: async (job, ctx, token) => {
    const wheelId = rowIdFor('wheel.stop', job)
    const steps = await underCycleLock(ctx, job, token, async () => {
      const leg = await legOf(ctx, wheelId)
      const legSteps = leg ? await stepPosition(depsOf(ctx), leg) : {}
      return { ...legSteps, ...(await turnWheel(depsOf(ctx), wheelId)) }
    })
    ctx.log.info({ job: job.name, wheelId, steps }, 'wheel job')
    return { wheelId, steps }
  },
}
