/**
 * How the console shows money and time. Pure functions, no DOM.
 *
 * Amounts come from the API as decimal strings in a currency's unit ("1.500000000000000000" ETH)
 * or as base units with known decimals. They are never turned into a JS number: the digits are
 * cut with string and bigint arithmetic, rounded down (toward zero, so a shown magnitude is never
 * more than the real one) to the currency's display precision, trailing zeros trimmed down to its
 * minimum, the whole part grouped by thousands, and the currency code appended. A non-zero amount
 * that rounds down to zero is shown as "< 0.000001 ETH", never as a misleading "0".
 */

export interface Precision {
  /** digits after the point shown at most (the rest is cut: rounded down) */
  max: number
  /** digits after the point always shown (trailing zeros are trimmed down to this) */
  min: number
}

/** Display precision per currency; others get DEFAULT_PRECISION. */
export const DISPLAY_PRECISION: Readonly<Record<string, Precision>> = Object.freeze({
  USDC: { max: 2, min: 2 },
  USD: { max: 2, min: 2 },
  ETH: { max: 6, min: 0 },
  BTC: { max: 6, min: 0 },
})
export const DEFAULT_PRECISION: Precision = { max: 6, min: 0 }

export const precisionOf = (currency: string): Precision =>
  Object.hasOwn(DISPLAY_PRECISION, currency) ? (DISPLAY_PRECISION[currency] as Precision) : DEFAULT_PRECISION

/** U+2212: a minus sign that reads as one (and screen readers say "minus"). */
export const MINUS = '\u2212'

const DECIMAL = /^([+-])?(\d+)(?:\.(\d+))?$/

interface Parts {
  negative: boolean
  whole: string
  frac: string
}

/** A decimal string's parts (leading zeros of the whole part dropped), or undefined when it is not one. */
export function parseDecimal(value: string): Parts | undefined {
  const m = DECIMAL.exec(value.trim())
  if (!m) return undefined
  return { negative: m[1] === '-', whole: m[2]!.replace(/^0+(?=\d)/, ''), frac: m[3] ?? '' }
}

/** "1234567" → "1,234,567" */
export function groupThousands(digits: string): string {
  let out = ''
  for (let i = digits.length; i > 0; i -= 3) out = digits.slice(Math.max(0, i - 3), i) + (out ? `,${out}` : '')
  return out
}

/**
 * A decimal string as people read it, without the currency: rounded down to `p.max` places,
 * trailing zeros trimmed to `p.min`, grouped. Input that is not a decimal string is returned as is.
 */
export function formatNumber(value: string, p: Precision): string {
  const parts = parseDecimal(value)
  if (!parts) return value
  const { negative, whole } = parts
  let frac = parts.frac.slice(0, p.max)
  while (frac.length > p.min && frac.endsWith('0')) frac = frac.slice(0, -1)
  frac = frac.padEnd(p.min, '0')
  const shownZero = whole === '0' && !/[1-9]/.test(frac)
  const isZero = whole === '0' && !/[1-9]/.test(parts.frac)
  if (shownZero && !isZero) {
    // dust: less than the smallest step shown
    const step = p.max === 0 ? '1' : `0.${'0'.repeat(p.max - 1)}1`
    return negative ? `> ${MINUS}${step}` : `< ${step}`
  }
  const body = groupThousands(whole) + (frac ? `.${frac}` : '')
  return negative && !isZero ? `${MINUS}${body}` : body
}

/** A decimal string in `currency`'s unit, e.g. ("1000.000000", "USDC") → "1,000.00 USDC". */
export function formatAmount(value: string, currency: string): string {
  return `${formatNumber(value, precisionOf(currency))} ${currency}`
}

/** Base units with `decimals` places as a decimal string, exactly: (1500n, 3) → "1.500". */
export function unitsToDecimal(units: bigint | string, decimals: number): string {
  const v = typeof units === 'bigint' ? units : BigInt(units)
  const negative = v < 0n
  const digits = (negative ? -v : v).toString()
  if (decimals === 0) return `${negative ? '-' : ''}${digits}`
  const padded = digits.padStart(decimals + 1, '0')
  return `${negative ? '-' : ''}${padded.slice(0, -decimals)}.${padded.slice(-decimals)}`
}

/** Base units (wei, satoshi, USDC's 6 places) as people read them: (1500000000000000000n, 18, "ETH") → "1.5 ETH". */
export function formatUnits(units: bigint | string, decimals: number, currency: string): string {
  return formatAmount(unitsToDecimal(units, decimals), currency)
}

// ── time ──

export interface TimeOptions {
  /** IANA zone; default the browser's own (local time) */
  timeZone?: string
}

/** "2026-01-30 14:05" in local time (or `timeZone`): unambiguous whatever the locale. */
export function formatLocalTime(iso: string, opts: TimeOptions = {}): string {
  const d = new Date(iso)
  if (Number.isNaN(d.getTime())) return iso
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: opts.timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(d)
  const get = (t: Intl.DateTimeFormatPartTypes) => parts.find((x) => x.type === t)?.value ?? ''
  return `${get('year')}-${get('month')}-${get('day')} ${get('hour')}:${get('minute')}`
}

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * 86_400_000],
  ['month', 30 * 86_400_000],
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
]
const relative = new Intl.RelativeTimeFormat('en', { numeric: 'auto' })

/** How long ago (or how far ahead) `iso` is from `nowMs`: "5 minutes ago", "in 3 days", "just now". */
export function formatAge(iso: string, nowMs: number): string {
  const t = new Date(iso).getTime()
  if (Number.isNaN(t)) return ''
  const diff = t - nowMs
  for (const [unit, ms] of UNITS) {
    const n = Math.trunc(diff / ms)
    if (n !== 0) return relative.format(n, unit)
  }
  return 'just now'
}

/** "2026-01-30 14:05 (3 hours ago)" */
export function formatTime(iso: string, nowMs: number, opts: TimeOptions = {}): string {
  const age = formatAge(iso, nowMs)
  return age ? `${formatLocalTime(iso, opts)} (${age})` : iso
}

// ── labels ──

/** A ledger event type as words: "deposit_detected" → "deposit detected". */
export const eventLabel = (type: string): string => type.replaceAll('_', ' ')

// ── sums and settings ──

/** The exact sum of decimal strings, with as many places as the longest: ["1.5", "-0.25"] → "1.25". */
export function sumDecimals(values: readonly string[]): string {
  const parts = values.map(parseDecimal).filter((p): p is Parts => p !== undefined)
  const places = Math.max(0, ...parts.map((p) => p.frac.length))
  let total = 0n
  for (const p of parts) {
    const units = BigInt(`${p.whole}${p.frac.padEnd(places, '0')}`)
    total += p.negative ? -units : units
  }
  return unitsToDecimal(total, places)
}

/** A decimal string as a number, for drawing a chart only (never for a figure a person reads). */
export const plotNumber = (value: string | null | undefined): number | null =>
  value === null || value === undefined || !parseDecimal(value) ? null : Number(value)

/** "7.5" (percent, up to 2 places) → 750 basis points; undefined when it is not such a figure. */
export function percentToBps(text: string): number | undefined {
  const m = /^\s*(\d{1,3})(?:\.(\d{1,2}))?\s*$/.exec(text)
  if (!m) return undefined
  return Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0'))
}

/** 750 basis points → "7.5" (percent, trailing zeros trimmed). */
export function bpsToPercent(bps: number): string {
  const whole = Math.trunc(bps / 100)
  const frac = String(Math.abs(bps % 100))
    .padStart(2, '0')
    .replace(/0+$/, '')
  return frac ? `${whole}.${frac}` : String(whole)
}

/** "1.5" days → 36 hours (whole hours; up to 2 places of a day); undefined when it is not a figure. */
export function daysToHours(text: string): number | undefined {
  const m = /^\s*(\d{1,3})(?:\.(\d{1,2}))?\s*$/.exec(text)
  if (!m) return undefined
  return Math.round((Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0'))) * 0.24)
}

/** 36 hours → "1.5" days (up to 2 places). */
export const hoursToDays = (hours: number): string => String(Math.round((hours / 24) * 100) / 100)
