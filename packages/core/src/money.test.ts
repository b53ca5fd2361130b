import { describe, expect, it } from 'vitest'
import { bpsToNumber, formatE18, formatUsdc, fromBaseUnits, InvalidAmountError, toBaseUnits } from './money'

describe('money at the boundary', () => {
  it('parses decimals into base units exactly', () => {
    expect(toBaseUnits('1.5', 6)).toBe(1_500_000n)
    expect(toBaseUnits('0.000001', 6)).toBe(1n)
    expect(toBaseUnits('123', 0)).toBe(123n)
    expect(toBaseUnits('-2.25', 2)).toBe(-225n)
    expect(toBaseUnits('1.5000000', 6)).toBe(1_500_000n)
  })

  it('refuses more precision than the currency has unless a rounding is named', () => {
    expect(() => toBaseUnits('0.0000001', 6)).toThrow(InvalidAmountError)
    expect(toBaseUnits('0.0000001', 6, 'down')).toBe(0n)
    expect(toBaseUnits('0.0000001', 6, 'up')).toBe(1n)
    expect(toBaseUnits('0.0000025', 6, 'half-even')).toBe(2n)
    expect(toBaseUnits('0.0000035', 6, 'half-even')).toBe(4n)
    expect(toBaseUnits('0.00000251', 6, 'half-even')).toBe(3n)
  })

  it('refuses what is not a decimal', () => {
    for (const bad of ['', '1e6', '0x10', '1.', '.5', 'NaN', '1,5']) {
      expect(() => toBaseUnits(bad, 6), bad).toThrow(InvalidAmountError)
    }
  })

  it('formats with the currency decimals and round-trips', () => {
    expect(fromBaseUnits(1_500_000n, 6)).toBe('1.500000')
    expect(fromBaseUnits(-1n, 6)).toBe('-0.000001')
    expect(fromBaseUnits(42n, 0)).toBe('42')
    for (const v of [0n, 1n, 999_999n, 10n ** 30n, -(10n ** 18n) + 7n]) {
      expect(toBaseUnits(fromBaseUnits(v, 18), 18)).toBe(v)
    }
  })

  it('formats USDC (6 places) and e18 values (18 places) exactly, null as null', () => {
    expect(formatUsdc(1_500_000n)).toBe('1.500000')
    expect(formatUsdc(-1n)).toBe('-0.000001')
    expect(formatUsdc(0n)).toBe('0.000000')
    expect(formatUsdc(null)).toBeNull()
    expect(formatE18(2_500n * 10n ** 18n)).toBe('2500.000000000000000000')
    expect(formatE18(1n)).toBe('0.000000000000000001')
    expect(formatE18(null)).toBeNull()
    for (const v of [0n, 1n, 123_456_789n, -(10n ** 20n) - 3n]) {
      expect(toBaseUnits(formatUsdc(v), 6)).toBe(v)
      expect(toBaseUnits(formatE18(v), 18)).toBe(v)
    }
  })

  it('turns bps into numbers exactly, refusing what a number cannot hold', () => {
    expect(bpsToNumber(2_500n)).toBe(2500)
    expect(bpsToNumber(-125n)).toBe(-125)
    expect(bpsToNumber(null)).toBeNull()
    expect(bpsToNumber(BigInt(Number.MAX_SAFE_INTEGER))).toBe(Number.MAX_SAFE_INTEGER)
    expect(() => bpsToNumber(BigInt(Number.MAX_SAFE_INTEGER) + 1n)).toThrow(RangeError)
    expect(() => bpsToNumber(-(2n ** 60n))).toThrow(RangeError)
  })
})
