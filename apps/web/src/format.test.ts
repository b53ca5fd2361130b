import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  eventLabel,
  formatAge,
  formatAmount,
  formatLocalTime,
  formatNumber,
  formatTime,
  formatUnits,
  groupThousands,
  MINUS,
  type Precision,
  unitsToDecimal,
} from './format'

/** What a person reads, back to a bigint in 10^-max units: "1,234.5" with max 2 → 123450n. */
function readBack(shown: string, max: number): bigint {
  const plain = shown.replaceAll(',', '').replace(MINUS, '-')
  const [whole = '0', frac = ''] = plain.split('.')
  const negative = whole.startsWith('-')
  const abs = BigInt(whole.replace('-', '')) * 10n ** BigInt(max) + BigInt(frac.padEnd(max, '0') || '0')
  return negative ? -abs : abs
}

/** The reference: `units` with `decimals` places, cut toward zero to `max` places (bigint division truncates). */
const truncated = (units: bigint, decimals: number, max: number): bigint =>
  max >= decimals ? units * 10n ** BigInt(max - decimals) : units / 10n ** BigInt(decimals - max)

const precision = fc
  .record({ max: fc.integer({ min: 0, max: 8 }), min: fc.integer({ min: 0, max: 8 }) })
  .filter((p) => p.min <= p.max)
const units = fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n })
const decimals = fc.integer({ min: 0, max: 18 })

describe('amounts', () => {
  it('shows what people read: grouped, rounded down to the display precision, trimmed, with the code', () => {
    expect(formatAmount('1000.000000', 'USDC')).toBe('1,000.00 USDC')
    expect(formatAmount('1234.567891', 'USDC')).toBe('1,234.56 USDC') // down, not 1,234.57
    expect(formatAmount('1.500000000000000000', 'ETH')).toBe('1.5 ETH')
    expect(formatAmount('2.000000000000000000', 'ETH')).toBe('2 ETH')
    expect(formatAmount('1.623456789000000000', 'ETH')).toBe('1.623456 ETH')
    expect(formatAmount('0.12345678', 'BTC')).toBe('0.123456 BTC')
    expect(formatAmount('3000.000000000000000000', 'USD')).toBe('3,000.00 USD')
    expect(formatAmount('-12.345678', 'USDC')).toBe(`${MINUS}12.34 USDC`)
    expect(formatAmount('0', 'ETH')).toBe('0 ETH')
    expect(formatAmount('-0.000000', 'USDC')).toBe('0.00 USDC')
    expect(formatAmount('007.10', 'XYZ')).toBe('7.1 XYZ')
  })

  it('shows dust as less than the smallest step, never as zero', () => {
    expect(formatAmount('0.000000000000000001', 'ETH')).toBe('< 0.000001 ETH')
    expect(formatAmount('0.009999', 'USDC')).toBe('< 0.01 USDC')
    expect(formatAmount('-0.000001', 'USDC')).toBe(`> ${MINUS}0.01 USDC`)
    expect(formatNumber('0.4', { max: 0, min: 0 })).toBe('< 1')
  })

  it('keeps every digit of amounts no JS number holds', () => {
    const huge = '123456789012345678901234567890.999999999999999999'
    expect(formatAmount(huge, 'ETH')).toBe('123,456,789,012,345,678,901,234,567,890.999999 ETH')
    expect(formatUnits(2n ** 255n, 18, 'ETH')).toBe(
      '57,896,044,618,658,097,711,785,492,504,343,953,926,634,992,332,820,282,019,728.792003 ETH',
    )
  })

  it('leaves what is not a decimal string as it came', () => {
    expect(formatNumber('1e21', { max: 2, min: 2 })).toBe('1e21')
    expect(formatNumber('', { max: 2, min: 2 })).toBe('')
  })

  it('groups by thousands', () => {
    expect(groupThousands('0')).toBe('0')
    expect(groupThousands('999')).toBe('999')
    expect(groupThousands('1000')).toBe('1,000')
    expect(groupThousands('1234567')).toBe('1,234,567')
  })

  it('base units and their decimal string agree, exactly', () => {
    expect(unitsToDecimal(1500n, 3)).toBe('1.500')
    expect(unitsToDecimal('-5', 6)).toBe('-0.000005')
    expect(unitsToDecimal(42n, 0)).toBe('42')
    expect(formatUnits(1_500_000_000_000_000_000n, 18, 'ETH')).toBe('1.5 ETH')
    expect(formatUnits('1234567891', 6, 'USDC')).toBe('1,234.56 USDC')
  })

  it('property: what is shown reads back as the amount rounded toward zero to the precision', () => {
    fc.assert(
      fc.property(units, decimals, precision, (u, d, p: Precision) => {
        const shown = formatNumber(unitsToDecimal(u, d), p)
        const cut = truncated(u, d, p.max)
        if (cut === 0n && u !== 0n) {
          expect(shown).toMatch(/^(< |> \u2212)(1|0\.0*1)$/) // dust
          return
        }
        expect(readBack(shown, p.max)).toBe(cut)
      }),
      { numRuns: 500 },
    )
  })

  it('property: never more magnitude than the amount, and less by under one step', () => {
    fc.assert(
      fc.property(units, decimals, precision, (u, d, p) => {
        const shown = formatNumber(unitsToDecimal(u, d), p)
        if (shown.startsWith('<') || shown.startsWith('>')) return
        const scale = 10n ** BigInt(d)
        const back = readBack(shown, p.max) // in 10^-max
        const abs = (x: bigint) => (x < 0n ? -x : x)
        // compare |shown| and |amount| at the common scale 10^-(max+d)
        const shownScaled = abs(back) * scale
        const exactScaled = abs(u) * 10n ** BigInt(p.max)
        expect(shownScaled <= exactScaled).toBe(true)
        expect(exactScaled - shownScaled < scale).toBe(true)
      }),
      { numRuns: 500 },
    )
  })

  it('property: the shape: groups of three, min..max decimals, no trailing zero beyond min, a sign only when non-zero', () => {
    fc.assert(
      fc.property(units, decimals, precision, (u, d, p) => {
        const shown = formatNumber(unitsToDecimal(u, d), p)
        if (shown.startsWith('<') || shown.startsWith('>')) return
        const m = /^(\u2212)?(\d{1,3}(?:,\d{3})*)(?:\.(\d+))?$/.exec(shown)
        expect(m, shown).not.toBeNull()
        const [, sign, whole = '', frac = ''] = m ?? []
        expect(whole === '0' || !whole.startsWith('0')).toBe(true)
        expect(frac.length).toBeGreaterThanOrEqual(p.min)
        expect(frac.length).toBeLessThanOrEqual(p.max)
        if (frac.length > p.min) expect(frac.endsWith('0')).toBe(false)
        if (sign) expect(u < 0n).toBe(true)
        expect(shown).not.toMatch(/e|NaN|Infinity/)
      }),
      { numRuns: 500 },
    )
  })

  it('property: base units and decimal strings give the same text', () => {
    fc.assert(
      fc.property(units, decimals, fc.constantFrom('USDC', 'ETH', 'BTC', 'XYZ'), (u, d, c) => {
        expect(formatUnits(u, d, c)).toBe(formatAmount(unitsToDecimal(u, d), c))
        expect(formatUnits(u.toString(), d, c)).toBe(formatUnits(u, d, c))
      }),
    )
  })
})

describe('time', () => {
  const now = Date.parse('2026-01-30T12:00:00Z')

  it('shows local time without seconds, in the zone asked', () => {
    expect(formatLocalTime('2026-01-30T09:05:59.999Z', { timeZone: 'UTC' })).toBe('2026-01-30 09:05')
    expect(formatLocalTime('2026-01-30T23:30:00Z', { timeZone: 'Asia/Tokyo' })).toBe('2026-01-31 08:30')
    expect(formatLocalTime('2026-07-01T00:00:00Z', { timeZone: 'America/New_York' })).toBe('2026-06-30 20:00')
    expect(formatLocalTime('not a date')).toBe('not a date')
  })

  it('says how long ago, or how far ahead', () => {
    expect(formatAge('2026-01-30T11:59:30Z', now)).toBe('just now')
    expect(formatAge('2026-01-30T11:55:00Z', now)).toBe('5 minutes ago')
    expect(formatAge('2026-01-30T09:00:00Z', now)).toBe('3 hours ago')
    expect(formatAge('2026-01-29T11:00:00Z', now)).toBe('yesterday')
    expect(formatAge('2026-01-20T12:00:00Z', now)).toBe('10 days ago')
    expect(formatAge('2026-02-02T12:00:00Z', now)).toBe('in 3 days')
    expect(formatAge('2024-01-01T00:00:00Z', now)).toBe('2 years ago')
    expect(formatTime('2026-01-30T09:00:00Z', now, { timeZone: 'UTC' })).toBe('2026-01-30 09:00 (3 hours ago)')
  })

  it('property: the age is in the past for earlier instants and ahead for later ones', () => {
    fc.assert(
      fc.property(fc.integer({ min: 60_000, max: 10 * 365 * 86_400_000 }), (ms) => {
        expect(formatAge(new Date(now - ms).toISOString(), now)).toMatch(/ago$|^yesterday$|^last /)
        expect(formatAge(new Date(now + ms).toISOString(), now)).toMatch(/^in |^tomorrow$|^next /)
      }),
    )
  })
})

describe('labels', () => {
  it('names events in words', () => {
    expect(eventLabel('deposit_detected')).toBe('deposit detected')
  })
})
