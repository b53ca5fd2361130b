/**
 * USD prices for code outside the feed (withdrawal bounds in USD, spec 8.2; the fee examples).
 * `PriceSource` was born in the withdrawals route; it lives here now so every consumer shares it.
 */
import type { Redis } from 'ioredis'
import { MARKET_NAMES, type MarketNames, readLatestPrices } from './channels'

export interface PriceSource {
  /** USD per one whole unit of `asset`, as a positive decimal string */
  usdPrice(asset: string): Promise<string>
  /** true while the price is a fixed stand-in rather than a market feed (shown on the routes) */
  readonly indicative: boolean
}

/**
 * A FIXED stand-in for the ETH/USD price, for development and tests only. Not a market price:
 * it only converts the USD withdrawal bounds into ETH until the withdrawals route reads the feed.
 */
export const DEV_ETH_USD_PRICE = '3000'

/** USDC 1:1, ETH at a fixed price. */
export function fixedPriceSource(ethUsd: string = DEV_ETH_USD_PRICE): PriceSource {
  return {
    indicative: true,
    async usdPrice(asset) {
      return asset === 'USDC' ? '1' : ethUsd
    },
  }
}

/** No price, or a price older than allowed: the caller decides (a 503, a fallback). */
export class PriceUnavailableError extends Error {
  constructor(readonly asset: string) {
    super(`no recent ${asset} price`)
    this.name = 'PriceUnavailableError'
  }
}

/**
 * The feed's latest index price from Redis (what the worker's price feed caches); USDC 1:1.
 * Rejects with PriceUnavailableError when there is none or it is older than `maxAgeMs`
 * (by `now`, exchange time of the tick).
 */
export function feedPriceSource(
  redis: Redis,
  opts: { maxAgeMs: number; now: () => number; names?: MarketNames },
): PriceSource {
  return {
    indicative: false,
    async usdPrice(asset) {
      if (asset === 'USDC') return '1'
      const [raw] = await readLatestPrices(redis, opts.names ?? MARKET_NAMES, [asset])
      if (!raw) throw new PriceUnavailableError(asset)
      const latest = JSON.parse(raw) as { index: string; ts: string }
      if (opts.now() - Date.parse(latest.ts) > opts.maxAgeMs) throw new PriceUnavailableError(asset)
      return latest.index
    },
  }
}
