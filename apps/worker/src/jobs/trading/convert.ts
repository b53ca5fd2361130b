/**
 * The conversion rounds' tick (docs/trading.md "Conversions"): @wh/trading's runConversions, every
 * CONVERSION_FAST_TICK_SECONDS on the `conversions` queue. Its name and queue are the job scheduler's key in Redis.
 */
import { type ConvertDeps, runConversions } from '@wh/trading'
import type { TickContext, TickDefinition, WorkerDeps } from '../../ticks'

export const CONVERT_TICK = 'trading-convert'

/** A round's dependencies from the worker's (the tick's, or a job's that runs one round: runConversion). */
export function convertDepsOf(deps: WorkerDeps, log: TickContext['log']): ConvertDeps {
  return {
    ...deps,
    log,
    preConvertLeadMinutes: deps.config.preConvertLeadMinutes,
    stuckMinutes: deps.config.conversionStuckMinutes,
  }
}

export const convertTick: TickDefinition = {
  name: CONVERT_TICK,
  queue: 'conversions',
  // CONVERSION_FAST_TICK_SECONDS (spec 8.3) sets the period; this is its default
  everyMs: 5_000,
  everyMsOf: (config) => config.conversionFastTickSeconds * 1000,
  process: (_job, ctx) => runConversions(convertDepsOf(ctx.deps, ctx.log)),
}
