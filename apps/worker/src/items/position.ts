/**
 * The position jobs (queue `trading`, under the exchange cycle lock like the funding and placing
 * ticks they share rows with):
 *   `position.advance` (POST /positions): its funding signed and sent now (@wh/subaccounts `fundTransferById`),
 *     then the position moved step by step (@wh/trading `stepPosition`: funding landed → instrument
 *     chosen → first order) while each step moves it on; a funding the exchange is still settling
 *     brings the job back shortly.
 *   `position.cancel` (DELETE of a leg placing orders): its orders cancelled and its window ended.
 *   `position.close` (DELETE of a sold leg): its buy-back sent at the quoted limit.
 * A position that is absent or no longer live is left alone. One that ends `failed` (its funding
 * refused, its collateral below the minimum size) fails the job with its reason.
 */
import type { RowJobName } from '@wh/jobs'
import { fundTransferById } from '@wh/subaccounts'
import { stepPosition } from '@wh/trading'
import { UnrecoverableError } from 'bullmq'
import { tradingDepsOf } from '../jobs/trading/ticks'
import type { TickContext, TickDefinition } from '../ticks'
import { comeBackLater, rowIdFor, underCycleLock } from './defer'

/** Placing steps one `position.advance` takes at most: funding landed, instrument chosen, first order. */
export const ADVANCE_MAX_STEPS = 3
/** The steps after which the next one can follow at once (the others wait on the exchange or the clock). */
const MOVES_ON = new Set(['funded', 'chosen'])
const LIVE = new Set(['requested', 'funding', 'placing', 'open', 'closing'])
/** a funding the exchange has (signed and sent, or accepted): it settles in moments */
const IN_FLIGHT = new Set(['submitted', 'accepted'])
/** a funding still to be sent or settled: the job's to move on */
const OPEN_FUNDING = new Set(['reserved', ...IN_FLIGHT])

interface PositionState {
  state: string
  reason: string | null
  funding_transfer_id: string | null
  funding_state: string | null
}

async function positionOf(ctx: TickContext, id: string): Promise<PositionState | undefined> {
  const [p] = await ctx.deps.sql<PositionState[]>`
    select p.state, p.reason, p.funding_transfer_id, f.state as funding_state
    from positions p left join subaccount_transfers f on f.id = p.funding_transfer_id where p.id = ${id}`
  return p
}

const placeDepsOf = (ctx: TickContext) => tradingDepsOf(ctx.deps, ctx.log)

/** A position that ended failed fails its job with its reason (a decision: not retried). */
function failedIfSo(p: PositionState | undefined): void {
  if (p?.state === 'failed') throw new UnrecoverableError((p.reason ?? 'FAILED').slice(0, 200))
}

/** `position.advance`: fund, then place, as far as the exchange lets it go now. */
async function advance(ctx: TickContext, id: string): Promise<{ steps: string[]; funding?: string } | 'absent'> {
  const before = await positionOf(ctx, id)
  if (!before || !LIVE.has(before.state)) return 'absent'
  const funding =
    before.funding_transfer_id && OPEN_FUNDING.has(before.funding_state ?? '')
      ? ((await fundTransferById({ ...ctx.deps, log: ctx.log }, before.funding_transfer_id)) ?? 'absent')
      : undefined
  const deps = placeDepsOf(ctx)
  const steps: string[] = []
  for (let i = 0; i < ADVANCE_MAX_STEPS; i++) {
    const step = Object.keys(await stepPosition(deps, id))[0] ?? 'none'
    steps.push(step)
    if (!MOVES_ON.has(step)) break
  }
  return { steps, ...(funding && { funding }) }
}

/** One placing step (a cancel's or a close's): the tick's own step for that position. */
async function oneStep(ctx: TickContext, id: string): Promise<{ steps: string[] } | 'absent'> {
  const p = await positionOf(ctx, id)
  if (!p || !LIVE.has(p.state)) return 'absent'
  return { steps: Object.keys(await stepPosition(placeDepsOf(ctx), id)) }
}

function processor(name: RowJobName & `position.${string}`, run: typeof oneStep): TickDefinition {
  return {
    name,
    queue: 'trading',
    process: async (job, ctx, token) => {
      const positionId = rowIdFor(name, job)
      const done = await underCycleLock(ctx, job, token, () => run(ctx, positionId))
      if (done === 'absent') return { positionId, outcome: 'absent' }
      if ('outcome' in done) return { positionId, ...done }
      const after = await positionOf(ctx, positionId)
      ctx.log.info({ job: name, positionId, ...done, state: after?.state }, 'position job')
      failedIfSo(after)
      // a funding sent and settling at the exchange: looked at again shortly, then placed (one held or
      // waiting for the bridge stays reserved: the funding tick serves it)
      if (name === 'position.advance' && after?.state === 'funding' && IN_FLIGHT.has(after.funding_state ?? ''))
        return comeBackLater(job, token, 'its funding to settle')
      return { positionId, ...done, state: after?.state }
    },
  }
}

export const positionProcessors: readonly TickDefinition[] = [
  processor('position.advance', advance),
  processor('position.cancel', oneStep),
  processor('position.close', oneStep),
]
