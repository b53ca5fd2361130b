/**
 * USD bounds → base units of an asset, bigint throughout (no float near an amount). Prices and
 * USD figures are decimal strings; both are scaled to PRICE_DECIMALS places before dividing.
 */
import { toBaseUnits } from '@wh/core'

/** Places kept of a USD figure or a price (USD values finer than 1e-8 do not matter here). */
export const PRICE_DECIMALS = 8

/**
 * The base units of an asset worth `usd` at `priceUsd` per whole unit. `rounding` 'up' for a
 * minimum (never let through less than the minimum's worth), 'down' for a maximum.
 *
 * @example usdToBaseUnits('10', '3000', 18, 'up') === 3_333_333_333_333_334n
 */
export function usdToBaseUnits(usd: string, priceUsd: string, decimals: number, rounding: 'up' | 'down'): bigint {
  const usdScaled = toBaseUnits(usd, PRICE_DECIMALS, 'down')
  const priceScaled = toBaseUnits(priceUsd, PRICE_DECIMALS, 'half-even')
  if (priceScaled <= 0n) throw new RangeError('price must be positive')
  const numerator = usdScaled * 10n ** BigInt(decimals)
  const q = numerator / priceScaled
  return rounding === 'up' && q * priceScaled !== numerator ? q + 1n : q
}
