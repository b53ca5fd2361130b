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
