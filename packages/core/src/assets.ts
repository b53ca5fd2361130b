/**
 * The underlyings the service trades options on: one subaccount per user and underlying at the
 * exchange, one wheel per user and underlying, one price feed each. The one list every route and
 * tick validates an `:asset` against.
 */
export const UNDERLYINGS = ['ETH', 'BTC'] as const
export type Underlying = (typeof UNDERLYINGS)[number]

export function isUnderlying(value: string): value is Underlying {
  return (UNDERLYINGS as readonly string[]).includes(value)
}

/** The cash currency of every subaccount (puts are secured in it, premiums are paid in it). */
export const CASH_CURRENCY = 'USDC'

/**
 * Decimals of every currency the ledger holds (docs/ledger.md: bigint base units inside, decimal strings
 * with these places in JSON). The chain registry knows only deposit tokens; the exchange also
 * settles in BTC.
 */
export const CURRENCY_DECIMALS: Readonly<Record<string, number>> = Object.freeze({ USDC: 6, ETH: 18, BTC: 8 })

/** The decimals of `currency`, or undefined for a currency the table does not know. */
export function decimalsOf(currency: string): number | undefined {
  return Object.hasOwn(CURRENCY_DECIMALS, currency) ? CURRENCY_DECIMALS[currency] : undefined
}
