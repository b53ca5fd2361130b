/**
 * Redis names of the market data, in one place. Every key carries the `{market}` hash tag, so
 * the fenced publish script (which touches the lock, the sequence and the latest update) runs on
 * one node of a Redis Cluster too.
 */
import type { Redis } from 'ioredis'

export interface MarketNames {
  /** the price feed's single-holder lease (feed/lease.ts) */
  readonly feedLease: string
  /** per-asset sequence counter of published price updates */
  seq(asset: string): string
  /** per-asset latest PriceUpdate (JSON): the snapshot a new WebSocket client gets */
  latest(asset: string): string
  /** the pub/sub channel of an asset's price updates */
  priceChannel(asset: string): string
}

/**
 * The names under `namespace` (empty in a deployment; tests give each file its own, because
 * pub/sub channels are not scoped by Redis database).
 */
export function marketNames(namespace = ''): MarketNames {
  const tag = `${namespace}{market}`
  return Object.freeze({
    feedLease: `${tag}:feed-lease`,
    seq: (asset: string) => `${tag}:seq:${asset}`,
    latest: (asset: string) => `${tag}:latest:${asset}`,
    priceChannel: (asset: string) => `${namespace}market:prices:${asset}`,
  })
}

export const MARKET_NAMES: MarketNames = marketNames()

// KEYS: lease, seq, latest. ARGV: lease token, message head (up to `"seq":`), message tail, channel.
// Publishes only while the caller still holds the lease (a fence against a paused ex-holder).
const PUBLISH_FENCED = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
local seq = redis.call('INCR', KEYS[2])
local msg = ARGV[2] .. seq .. ARGV[3]
redis.call('SET', KEYS[3], msg)
redis.call('PUBLISH', ARGV[4], msg)
return seq`

/** What the worker publishes for an asset, without its sequence number (the script assigns it). */
export interface PriceUpdateBody {
  ts: string
  publishedAt: string
  index: string
  mark: string
  atmIv: string | null
  instruments: unknown[]
}

/**
 * Assigns the next sequence number, stores the update as the asset's latest and publishes it, in
 * one atomic step. Resolves the sequence number, or undefined when `leaseToken` no longer holds
 * the lease (nothing was written).
 */
export async function publishPriceUpdate(
  redis: Redis,
  names: MarketNames,
  leaseToken: string,
  asset: string,
  body: PriceUpdateBody,
): Promise<number | undefined> {
  const head = `{"type":"price","asset":${JSON.stringify(asset)},"seq":`
  const tail = `,${JSON.stringify(body).slice(1)}`
  const seq = (await redis.eval(
    PUBLISH_FENCED,
    3,
    names.feedLease,
    names.seq(asset),
    names.latest(asset),
    leaseToken,
    head,
    tail,
    names.priceChannel(asset),
  )) as number
  return seq < 0 ? undefined : seq
}

/** The latest PriceUpdate of each asset as stored (JSON text), null where none was published yet. */
export async function readLatestPrices(
  redis: Redis,
  names: MarketNames,
  assets: readonly string[],
): Promise<(string | null)[]> {
  if (assets.length === 0) return []
  return redis.mget(...assets.map((a) => names.latest(a)))
}
