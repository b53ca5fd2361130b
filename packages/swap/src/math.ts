/**
 * The ladder's arithmetic, bigint only (docs/ledger.md: no float anywhere near an amount). Amounts are base
 * units; a price is a ratio of whole units, so decimals enter explicitly.
 */
import { toBaseUnits } from '@wh/core'

/** One basis point is 1/10,000. */
export const BPS_DENOMINATOR = 10_000n

/** A price as an exact ratio: whole units of the bought currency per whole unit of the sold one. */
export interface PriceRatio {
  readonly num: bigint
  readonly den: bigint
}

/** The index price is not a positive decimal or ratio. */
export class InvalidPriceError extends RangeError {
  readonly code = 'INVALID_INDEX_PRICE'
  constructor(readonly input: string) {
    super(`invalid index price: ${input}`)
    this.name = 'InvalidPriceError'
  }
}

const DECIMAL = /^(\d+)(?:\.(\d+))?$/

/**
 * A decimal string ('3000', '0.000333') or a ratio as an exact ratio; positive only.
 *
 * @example toPriceRatio('2999.5') // { num: 29995n, den: 10n }
 */
export function toPriceRatio(price: string | PriceRatio): PriceRatio {
  if (typeof price !== 'string') {
    if (price.num <= 0n || price.den <= 0n) throw new InvalidPriceError(`${price.num}/${price.den}`)
    return { num: price.num, den: price.den }
  }
  const m = DECIMAL.exec(price.trim())
  if (!m) throw new InvalidPriceError(price)
  const frac = m[2] ?? ''
  const ratio = { num: toBaseUnits(price.trim(), frac.length), den: 10n ** BigInt(frac.length) }
  if (ratio.num === 0n) throw new InvalidPriceError(price)
  return ratio
}

/**
 * The output the index price implies for `amountIn`, as an exact fraction of base units:
 * amountIn × num × 10^buyDecimals / (den × 10^sellDecimals).
 */
export function expectedOutFraction(
  amountIn: bigint,
  price: PriceRatio,
  sellDecimals: number,
  buyDecimals: number,
): PriceRatio {
  return { num: amountIn * price.num * 10n ** BigInt(buyDecimals), den: price.den * 10n ** BigInt(sellDecimals) }
}

/**
 * How far `quote` is from the index price's output, in basis points, rounded up (so a deviation
 * just above the threshold is never reported as the threshold). Both directions count: a quote far
 * better than the index means a stale index or a manipulated pool as surely as a bad one.
 */
export function deviationBps(
  quote: bigint,
  amountIn: bigint,
  price: PriceRatio,
  sellDecimals: number,
  buyDecimals: number,
): bigint {
  const expected = expectedOutFraction(amountIn, price, sellDecimals, buyDecimals)
  if (expected.num <= 0n) throw new InvalidPriceError('zero expected output')
  // |quote − e.num/e.den| / (e.num/e.den) = |quote·e.den − e.num| / e.num
  const diff = quote * expected.den - expected.num
  const abs = diff < 0n ? -diff : diff
  return ceilDiv(abs * BPS_DENOMINATOR, expected.num)
}

/** True when the quote is further than `thresholdBps` from the index price (exact, no rounding). */
export function exceedsDeviation(
  quote: bigint,
  amountIn: bigint,
  price: PriceRatio,
  sellDecimals: number,
  buyDecimals: number,
  thresholdBps: number,
): boolean {
  const expected = expectedOutFraction(amountIn, price, sellDecimals, buyDecimals)
  const diff = quote * expected.den - expected.num
  const abs = diff < 0n ? -diff : diff
  return abs * BPS_DENOMINATOR > BigInt(thresholdBps) * expected.num
}

/**
 * The least output a ladder step accepts: quote × (1 − ε), rounded down (the pool compares
 * `amountOut < minAmountOut`, so rounding down never makes a step stricter than ε).
 *
 * @example minAmountOut(1_000_000n, 3) === 999_700n
 */
export function minAmountOut(quote: bigint, epsilonBps: number): bigint {
  if (quote < 0n) throw new RangeError('quote must not be negative')
  if (!Number.isInteger(epsilonBps) || epsilonBps < 0 || epsilonBps > 10_000)
    throw new RangeError(`epsilon must be an integer 0..10000 bps, got ${epsilonBps}`)
  return (quote * (BPS_DENOMINATOR - BigInt(epsilonBps))) / BPS_DENOMINATOR
}

function ceilDiv(a: bigint, b: bigint): bigint {
  return (a + b - 1n) / b
}
