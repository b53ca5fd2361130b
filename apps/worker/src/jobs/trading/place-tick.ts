/**
 * The placing tick (queue `trading`, every 10 s, under the exchange cycle lock): every live
 * position one step further (@wh/trading's runPlacing; docs/trading.md "Placing").
 */
import { strategyEventsOn } from '@wh/market'
import { runPlacing, tradingProfile } from '@wh/trading'
import type { TickDefinition } from '../../ticks'

export const PLACE_TICK = 'trading-place'
export const PLACE_EVERY_MS = 10_000

export const placeTick: TickDefinition = {
  name: PLACE_TICK,
  queue: 'trading',
  everyMs: PLACE_EVERY_MS,
  process: async (_job, ctx) => {
    const d = ctx.deps
    return runPlacing({
      sql: d.sql,
      exchange: d.exchange,
      redis: d.redis,
      clock: d.clock,
      platformFeeRate: d.config.platformFeeRate,
      profile: tradingProfile(d.config.tradingProfile),
      strategyEvents: strategyEventsOn(d.redis),
      log: ctx.log,
    })
  },
}
