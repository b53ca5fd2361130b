/**
 * Decimals of the currencies the ledger holds, for formatting base units as decimal strings
 * (DESIGN: money is bigint base units inside, decimal strings with the currency's decimals in JSON).
 * The chain registry of @wh/wallet knows only the deposit tokens; the exchange also settles in BTC.
 */
export const CURRENCY_DECIMALS: Readonly<Record<string, number>> = Object.freeze({
  USDC: 6,
  ETH: 18,
  BTC: 8,
})

/** The decimals of `currency`, or undefined for a currency this table does not know. */
export function decimalsOf(currency: string): number | undefined {
  return Object.hasOwn(CURRENCY_DECIMALS, currency) ? CURRENCY_DECIMALS[currency] : undefined
}
