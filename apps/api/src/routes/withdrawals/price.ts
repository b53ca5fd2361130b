/**
 * USD prices for the withdrawal bounds (WITHDRAWAL_MIN_USD / WITHDRAWAL_MAX_USD are USD, spec 8.2;
 * an ETH withdrawal needs them in ETH). The PriceSource interface and the FIXED DEVELOPMENT PRICE
 * (DEV_ETH_USD_PRICE, docs/chains.md) moved to @wh/market (prices.ts), which also offers
 * `feedPriceSource`, the price feed's latest index from Redis. USDC counts 1:1.
 */
export { DEV_ETH_USD_PRICE, fixedPriceSource, type PriceSource } from '@wh/market'

export type WithdrawalAsset = 'USDC' | 'ETH'
