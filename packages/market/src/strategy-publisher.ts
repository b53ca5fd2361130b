/**
 * The publisher of trading's strategy events (docs/market-data.md "Strategy events"): @wh/trading
 * declares what it tells as a port (`StrategyEvents`, since it cannot import this package, which
 * depends on it) and this implements it on the stream's Redis names and publish script. The worker
 * hands `strategyEventsOn(redis)` to the placing step and the wheel runner. Passing trading's
 * shapes to `publishStrategyEvent` checks them against the stream's schema type at compile time.
 */
import type { ChosenQuote, StrategyEvents, TradingStrategyEvent } from '@wh/trading'
import type { Redis } from 'ioredis'
import { MARKET_NAMES, type MarketNames } from './channels'
import { cacheChosenQuote, publishStrategyEvent, type StrategyNames, strategyNames } from './strategies-events'

/** Trading's port, counting what it lost. */
export interface StrategyPublisher extends StrategyEvents {
  /** events lost to Redis errors since start */
  readonly dropped: number
}

/**
 * A publisher on `redis` (its pub/sub channels are not key-prefixed: `names` namespaces them). A
 * publish never fails its caller: Redis trouble loses the event (the next one carries a newer
 * sequence number, and GET /:asset/strategies reads Postgres), and is counted in `dropped`.
 */
export function strategyEvents(redis: Redis, names: MarketNames = MARKET_NAMES): StrategyPublisher {
  const sn: StrategyNames = strategyNames(names)
  let dropped = 0
  return {
    get dropped() {
      return dropped
    },
    async publish(asset: string, body: TradingStrategyEvent) {
      try {
        await publishStrategyEvent(redis, sn, asset, body)
      } catch {
        dropped++
      }
    },
    async cacheQuote(q: ChosenQuote) {
      try {
        await cacheChosenQuote(redis, sn, q)
      } catch {
        dropped++
      }
    },
  }
}

const byRedis = new WeakMap<Redis, StrategyPublisher>()

/** The deployment's publisher on `redis` (MARKET_NAMES), one per connection: its `dropped` counts them all. */
export function strategyEventsOn(redis: Redis): StrategyPublisher {
  let e = byRedis.get(redis)
  if (!e) {
    e = strategyEvents(redis)
    byRedis.set(redis, e)
  }
  return e
}
