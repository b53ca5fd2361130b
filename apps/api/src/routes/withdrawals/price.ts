/**
 * USD prices for the withdrawal bounds (WITHDRAWAL_MIN_USD / WITHDRAWAL_MAX_USD are USD, spec 8.2;
 * an ETH withdrawal needs them in ETH). A small interface so the market-data issue can plug in a
 * real feed; until then ETH has a FIXED DEVELOPMENT PRICE (DEV_ETH_USD_PRICE), documented as such
 * in docs/chains.md. USDC counts 1:1.
 */

export type WithdrawalAsset = 'USDC' | 'ETH'

export interface PriceSource {
  /** USD per one whole unit of `asset`, as a positive decimal string (at most 8 decimals) */
  usdPrice(asset: WithdrawalAsset): Promise<string>
  /** true while the price is a fixed stand-in rather than a market feed (shown on the routes) */
  readonly indicative: boolean
}

/**
 * A FIXED stand-in for the ETH/USD price, for development and tests only, until the market-data
 * issue brings a feed. Not a market price: it only converts the USD bounds into ETH.
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
