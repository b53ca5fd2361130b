/**
 * The worker's long-lived price feed (not a BullMQ tick: it is one upstream subscription, held for
 * as long as the process lives). Every replica starts it; the lease in Redis makes exactly one the
 * holder, the others stand by and take over within a lease TTL when the holder dies
 * (packages/market/src/feed/price-feed.ts, docs/market-data.md "The feed"). The holder follows the
 * perps, the ATM options and the options of live positions, re-read from `deps.sql` every 10 s.
 */
import { type MarketNames, type PriceFeed, type PriceFeedTuning, startPriceFeed } from '@wh/market'
import type { WorkerDeps } from '../ticks'

export interface PriceFeedLog {
  info(obj: object, msg?: string): void
  warn(obj: object, msg?: string): void
}

/** Starts contending for the feed; `close()` on shutdown writes pending candles and frees the lease. */
export function startWorkerPriceFeed(
  deps: Pick<WorkerDeps, 'exchange' | 'redis' | 'sql' | 'clock'>,
  log: PriceFeedLog,
  opts: { tuning?: Partial<PriceFeedTuning>; names?: MarketNames } = {},
): PriceFeed {
  return startPriceFeed({
    exchange: deps.exchange,
    redis: deps.redis,
    sql: deps.sql,
    log,
    ...(opts.tuning && { tuning: opts.tuning }),
    ...(opts.names && { names: opts.names }),
    now: () => deps.clock.now().getTime(),
  })
}
