/**
 * The wheel tick (queue `trading`, every WHEEL_RETRY_MS, under the exchange cycle lock, only when
 * WHEEL_ENABLED): each running wheel's next leg (@wh/trading's runWheels; docs/trading.md "The wheel").
 */
import { WHEEL_RETRY_MS } from '@wh/config'
import { strategyEventsOn } from '@wh/market'
import { runWheels, tradingProfile } from '@wh/trading'
import type { TickDefinition } from '../../ticks'

export const WHEEL_TICK = 'trading-wheel'

export const wheelTick: TickDefinition = {
  name: WHEEL_TICK,
  queue: 'trading',
  everyMs: WHEEL_RETRY_MS,
  process: async (_job, ctx) => {
    const d = ctx.deps
    return runWheels({
      sql: d.sql,
      redis: d.redis,
      exchange: d.exchange,
      clock: d.clock,
      profile: tradingProfile(d.config.tradingProfile),
      enabled: d.config.wheelEnabled,
      strategyEvents: strategyEventsOn(d.redis),
    })
  },
}
