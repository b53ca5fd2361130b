/**
 * The trading ticks, each a name, a queue, a period and one call into @wh/trading (docs/trading.md):
 * placing (queue `trading`, every 10 s, under the exchange cycle lock: every live position one step
 * further), the wheel runner (queue `trading`, every WHEEL_RETRY_MS, under the lock, only when
 * WHEEL_ENABLED: each running wheel's next leg) and the conversion rounds (queue `conversions`, every
 * CONVERSION_FAST_TICK_SECONDS). Names and queues are the job schedulers' keys in Redis.
 */
import { WHEEL_RETRY_MS } from '@wh/config'
import { strategyEventsOn } from '@wh/market'
import {
  type ConvertDeps,
  type PlaceDeps,
  runConversions,
  runPlacing,
  runWheels,
  tradingProfile,
  type WheelDeps,
} from '@wh/trading'
import type { TickContext, TickDefinition, WorkerDeps } from '../../ticks'

export const PLACE_TICK = 'trading-place'
export const PLACE_EVERY_MS = 10_000
export const WHEEL_TICK = 'trading-wheel'
export const CONVERT_TICK = 'trading-convert'

/** What placing and the wheel runner read, from the worker's deps (the ticks' and a job's for one row). */
export function tradingDepsOf(deps: WorkerDeps, log: TickContext['log']): PlaceDeps & WheelDeps {
  return {
    sql: deps.sql,
    exchange: deps.exchange,
    redis: deps.redis,
    clock: deps.clock,
    platformFeeRate: deps.config.platformFeeRate,
    profile: tradingProfile(deps.config.tradingProfile),
    enabled: deps.config.wheelEnabled,
    strategyEvents: strategyEventsOn(deps.redis),
    log,
  }
}

/** A round's dependencies from the worker's (the tick's, or a job's that runs one round: runConversion). */
export function convertDepsOf(deps: WorkerDeps, log: TickContext['log']): ConvertDeps {
  return {
    ...deps,
    log,
    preConvertLeadMinutes: deps.config.preConvertLeadMinutes,
    stuckMinutes: deps.config.conversionStuckMinutes,
  }
}

export const placeTick: TickDefinition = {
  name: PLACE_TICK,
  queue: 'trading',
  everyMs: PLACE_EVERY_MS,
  process: (_job, ctx) => runPlacing(tradingDepsOf(ctx.deps, ctx.log)),
}

export const wheelTick: TickDefinition = {
  name: WHEEL_TICK,
  queue: 'trading',
  everyMs: WHEEL_RETRY_MS,
  process: (_job, ctx) => runWheels(tradingDepsOf(ctx.deps, ctx.log)),
}

export const convertTick: TickDefinition = {
  name: CONVERT_TICK,
  queue: 'conversions',
  // CONVERSION_FAST_TICK_SECONDS (spec 8.3) sets the period; this is its default
  everyMs: 5_000,
  everyMsOf: (config) => config.conversionFastTickSeconds * 1000,
  process: (_job, ctx) => runConversions(convertDepsOf(ctx.deps, ctx.log)),
}
