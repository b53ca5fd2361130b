/**
 * Decimal strings on the wire, bigint fixed point inside. Derive encodes every amount,
 * price and fee in signed data as an 18-decimal integer ("e18"), so that is our
 * working unit too; token amounts on deposit/withdrawal use the token's own decimals.
 */
import { fromBaseUnits, toBaseUnits } from '@wh/core'

export const E18 = 10n ** 18n

/** Parses a decimal string into e18 units. @example toE18('1.5') === 1_500_000_000_000_000_000n */
export function toE18(decimal: string): bigint {
  return toBaseUnits(decimal, 18)
}

/** Formats e18 units as the shortest exact decimal string. @example fromE18(1_500_000_000_000_000_000n) === '1.5' */
export function fromE18(units: bigint): string {
  return trimDecimal(fromBaseUnits(units, 18))
}

/** Parses a decimal string into a token's base units. @example toUnits('2.5', 6) === 2_500_000n */
export function toUnits(decimal: string, decimals: number): bigint {
  return toBaseUnits(decimal, decimals)
}

/** Drops trailing zeros (and a bare point) so '1.500000' reads '1.5' as Derive prints it. */
export function trimDecimal(s: string): string {
  if (!s.includes('.')) return s
  const t = s.replace(/0+$/, '').replace(/\.$/, '')
  return t === '-0' ? '0' : t
}

/** Product of two e18 numbers, truncated toward zero. @example mulE18(2n * E18, E18 / 2n) === E18 */
export function mulE18(a: bigint, b: bigint): bigint {
  return (a * b) / E18
}

/** Quotient of two e18 numbers, truncated toward zero. */
export function divE18(a: bigint, b: bigint): bigint {
  return (a * E18) / b
}

/**
 * A float from a pricing model (never a balance) rounded to `step` (an e18 tick) and returned in e18.
 * Why: Black-Scholes needs Math.exp; its output is market data, quantised to the tick before any money uses it.
 */
export function floatToE18(x: number, stepE18: bigint = 1n): bigint {
  if (!Number.isFinite(x)) return 0n
  const units = BigInt(Math.round(x * 1e9)) * 10n ** 9n
  return stepE18 > 1n ? (units / stepE18) * stepE18 : units
}

/** e18 to a float, for pricing models only. */
export function e18ToFloat(units: bigint): number {
  return Number(units) / 1e18
}

export const absBig = (x: bigint): bigint => (x < 0n ? -x : x)
export const minBig = (a: bigint, b: bigint): bigint => (a < b ? a : b)
export const maxBig = (a: bigint, b: bigint): bigint => (a > b ? a : b)
