/**
 * Derive instrument names: options `ETH-20260130-3000-C` (currency, expiry date, strike, C/P),
 * perps `ETH-PERP`, spot `ETH-USDC`. Options expire at 08:00 UTC on their date.
 */
export const EXPIRY_HOUR_UTC = 8

export type ParsedInstrument =
  | { kind: 'option'; currency: string; expiryDate: string; expirySec: number; strike: string; optionType: 'C' | 'P' }
  | { kind: 'perp'; currency: string }
  | { kind: 'erc20'; currency: string; quote: string }

const OPTION = /^([A-Z0-9]+)-(\d{4})(\d{2})(\d{2})-(\d+(?:\.\d+)?)-([CP])$/
const PERP = /^([A-Z0-9]+)-PERP$/
const SPOT = /^([A-Z0-9]+)-(USDC)$/

/** Parses an instrument name; null when it is not one of Derive's shapes. */
export function parseInstrumentName(name: string): ParsedInstrument | null {
  const o = OPTION.exec(name)
  if (o) {
    const [, currency = '', y = '', m = '', d = '', strike = '', type = 'C'] = o
    const expiryMs = Date.UTC(Number(y), Number(m) - 1, Number(d), EXPIRY_HOUR_UTC)
    const check = new Date(expiryMs)
    if (check.getUTCDate() !== Number(d) || check.getUTCMonth() !== Number(m) - 1) return null
    return {
      kind: 'option',
      currency,
      expiryDate: `${y}${m}${d}`,
      expirySec: expiryMs / 1000,
      strike,
      optionType: type as 'C' | 'P',
    }
  }
  const p = PERP.exec(name)
  if (p) return { kind: 'perp', currency: p[1] ?? '' }
  const s = SPOT.exec(name)
  if (s) return { kind: 'erc20', currency: s[1] ?? '', quote: s[2] ?? '' }
  return null
}

/** `YYYYMMDD` of an expiry timestamp (seconds). */
export function expiryDateOf(expirySec: number): string {
  const d = new Date(expirySec * 1000)
  const mm = String(d.getUTCMonth() + 1).padStart(2, '0')
  const dd = String(d.getUTCDate()).padStart(2, '0')
  return `${d.getUTCFullYear()}${mm}${dd}`
}

/** @example optionName('ETH', 1769760000, '3000', 'C') === 'ETH-20260130-3000-C' */
export function optionName(currency: string, expirySec: number, strike: string, type: 'C' | 'P'): string {
  return `${currency}-${expiryDateOf(expirySec)}-${strike}-${type}`
}

/** The first 08:00 UTC strictly after `ms`, in seconds. */
export function nextExpiryAfter(ms: number): number {
  const d = new Date(ms)
  let t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), EXPIRY_HOUR_UTC)
  if (t <= ms) t += 86_400_000
  return t / 1000
}
