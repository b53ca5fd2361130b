/**
 * USD prices for the withdrawal bounds (WITHDRAWAL_MIN_USD / WITHDRAWAL_MAX_USD are USD, spec 8.2;
 * an ETH withdrawal needs them in ETH): the price feed's latest index (`feedPriceSource`, from
 * @wh/market), refused when older than WITHDRAWAL_PRICE_MAX_AGE_MS. USDC counts 1:1.
 */
export { feedPriceSource, type PriceSource } from '@wh/market'

export type WithdrawalAsset = 'USDC' | 'ETH'

/**
 * The oldest index a withdrawal bound is converted with. The feed publishes at least once a second
 * while the exchange streams (docs/market-data.md); a price older than this means the feed or the
 * exchange is down, and a request then answers 503 PRICE_UNAVAILABLE rather than trust it.
 */
export const WITHDRAWAL_PRICE_MAX_AGE_MS = 60_000
