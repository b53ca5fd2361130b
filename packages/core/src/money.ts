/**
 * Money crosses the boundary here: bigint in the currency's smallest unit inside,
 * decimal strings outside. Never a JS number near an amount.
 */
import { AppError } from './errors'

export type Rounding = 'down' | 'up' | 'half-even' | 'exact'

const DECIMAL = /^(-)?(\d+)(?:\.(\d+))?$/

export class InvalidAmountError extends AppError {
  constructor(input: string, reason: string) {
    super({ code: 'INVALID_AMOUNT', statusCode: 400, message: `invalid amount: ${reason}`, details: { input } })
  }
}

/**
 * Parses a decimal string into base units with `decimals` places.
 * @example toBaseUnits('1.5', 6) === 1_500_000n
 */
export function toBaseUnits(decimal: string, decimals: number, rounding: Rounding = 'exact'): bigint {
  const m = DECIMAL.exec(decimal.trim())
  if (!m) throw new InvalidAmountError(decimal, 'not a decimal number')
  const [, sign, whole = '0', frac = ''] = m
  const scale = 10n ** BigInt(decimals)
  let units = BigInt(whole) * scale
  const kept = frac.slice(0, decimals).padEnd(decimals, '0')
  units += kept === '' ? 0n : BigInt(kept)
  const dropped = frac.slice(decimals)
  if (dropped !== '' && /[1-9]/.test(dropped)) {
    if (rounding === 'exact') throw new InvalidAmountError(decimal, `more than ${decimals} decimals`)
    if (rounding === 'up') units += 1n
    if (rounding === 'half-even') {
      const first = dropped.charCodeAt(0) - 48
      const restNonZero = /[1-9]/.test(dropped.slice(1))
      if (first > 5 || (first === 5 && (restNonZero || units % 2n === 1n))) units += 1n
    }
  }
  return sign ? -units : units
}

/**
 * Formats base units as a decimal string with exactly `decimals` places.
 * @example fromBaseUnits(1_500_000n, 6) === '1.500000'
 */
export function fromBaseUnits(units: bigint, decimals: number): string {
  const neg = units < 0n
  const abs = neg ? -units : units
  if (decimals === 0) return `${neg ? '-' : ''}${abs}`
  const s = abs.toString().padStart(decimals + 1, '0')
  return `${neg ? '-' : ''}${s.slice(0, -decimals)}.${s.slice(-decimals)}`
}

/** True when `s` is a plain non-negative decimal number (no exponent, no sign). */
export function isDecimalString(s: string): boolean {
  return /^\d+(\.\d+)?$/.test(s)
}

/** The smaller of two bigints (Math.min takes numbers only). */
export function minBigint(a: bigint, b: bigint): bigint {
  return a < b ? a : b
}
/** The larger of two bigints. */
export function maxBigint(a: bigint, b: bigint): bigint {
  return a > b ? a : b
}

/** Decimals of USDC, the cash currency (its base units are micro-USDC). */
export const USDC_DECIMALS = 6
/** Decimals of the exchange's fixed-point numbers (prices, strikes, sizes, contracts: `…E18`). */
export const E18_DECIMALS = 18

/**
 * USDC base units as a decimal string with all 6 places (`fromBaseUnits`: exact, nothing rounded);
 * null stays null.
 * @example formatUsdc(1_500_000n) === '1.500000'
 */
export function formatUsdc(units: bigint): string
export function formatUsdc(units: bigint | null): string | null
export function formatUsdc(units: bigint | null): string | null {
  return units === null ? null : fromBaseUnits(units, USDC_DECIMALS)
}

/**
 * An e18 fixed-point value as a decimal string with all 18 places (exact, nothing rounded); null
 * stays null.
 * @example formatE18(2_500n * 10n ** 18n) === '2500.000000000000000000'
 */
export function formatE18(units: bigint): string
export function formatE18(units: bigint | null): string | null
export function formatE18(units: bigint | null): string | null {
  return units === null ? null : fromBaseUnits(units, E18_DECIMALS)
}

/**
 * Basis points (a whole number, as bigint) as a JSON number; null stays null. Exact: a value that a
 * number cannot hold exactly (beyond ±Number.MAX_SAFE_INTEGER) is refused (RangeError), never rounded.
 * @example bpsToNumber(2_500n) === 2500
 */
export function bpsToNumber(bps: bigint): number
export function bpsToNumber(bps: bigint | null): number | null
export function bpsToNumber(bps: bigint | null): number | null {
  if (bps === null) return null
  const n = Number(bps)
  if (!Number.isSafeInteger(n)) throw new RangeError(`${bps} bps is beyond a safe integer`)
  return n
}
