import { describe, expect, it } from 'vitest'
import { deviationBps, exceedsDeviation, InvalidPriceError, minAmountOut, toPriceRatio } from './math'

describe('ladder math (bigint)', () => {
  it('minAmountOut is quote × (1 − ε) rounded down', () => {
    expect(minAmountOut(1_000_000n, 3)).toBe(999_700n)
    expect(minAmountOut(1_000_000n, 100)).toBe(990_000n)
    // 12,345 × 9,997 / 10,000 = 12,341.2965 → 12,341
    expect(minAmountOut(12_345n, 3)).toBe(12_341n)
    expect(minAmountOut(1n, 3)).toBe(0n)
    expect(minAmountOut(0n, 50)).toBe(0n)
    // 18-decimal amounts do not lose precision
    expect(minAmountOut(1_234_567_890_123_456_789n, 25)).toBe(1_231_481_470_398_148_147n)
  })

  it('minAmountOut refuses a fractional, negative or >100 % epsilon', () => {
    expect(() => minAmountOut(1n, 2.5)).toThrow(RangeError)
    expect(() => minAmountOut(1n, -1)).toThrow(RangeError)
    expect(() => minAmountOut(1n, 10_001)).toThrow(RangeError)
  })

  it('every ladder step accepts at least the output of the step before (rounding never tightens)', () => {
    const ladder = [3, 6, 12, 25, 50, 100]
    for (const quote of [1n, 7n, 999n, 1_000_003n, 3_000_000_000_000_000_000n]) {
      const mins = ladder.map((e) => minAmountOut(quote, e))
      for (let i = 1; i < mins.length; i++) expect(mins[i]! <= mins[i - 1]!).toBe(true)
      for (const [i, m] of mins.entries()) {
        // m is the largest integer with m ≤ quote·(1 − ε)
        const e = BigInt(ladder[i]!)
        expect(m * 10_000n <= quote * (10_000n - e)).toBe(true)
        expect((m + 1n) * 10_000n > quote * (10_000n - e)).toBe(true)
      }
    }
  })

  it('parses decimal prices exactly and refuses bad ones', () => {
    expect(toPriceRatio('3000')).toEqual({ num: 3000n, den: 1n })
    expect(toPriceRatio('2999.5')).toEqual({ num: 29995n, den: 10n })
    expect(toPriceRatio('0.000333')).toEqual({ num: 333n, den: 1_000_000n })
    expect(toPriceRatio({ num: 1n, den: 3000n })).toEqual({ num: 1n, den: 3000n })
    for (const bad of ['0', '-1', '1e3', 'abc', '', '0.0']) expect(() => toPriceRatio(bad)).toThrow(InvalidPriceError)
    expect(() => toPriceRatio({ num: 1n, den: 0n })).toThrow(InvalidPriceError)
  })

  it('deviation in bps between a quote and the index price, across decimals', () => {
    // selling 1 ETH (18 decimals) at 3000 USDC (6 decimals): expected 3,000,000,000 base units
    const eth = 10n ** 18n
    const p = toPriceRatio('3000')
    expect(deviationBps(3_000_000_000n, eth, p, 18, 6)).toBe(0n)
    expect(deviationBps(2_970_000_000n, eth, p, 18, 6)).toBe(100n)
    expect(deviationBps(3_030_000_000n, eth, p, 18, 6)).toBe(100n)
    expect(deviationBps(2_969_999_999n, eth, p, 18, 6)).toBe(101n) // rounded up
    // selling 3000 USDC for ETH at 1/3000: expected exactly 1 ETH
    const inv = toPriceRatio({ num: 1n, den: 3000n })
    expect(deviationBps(eth, 3_000_000_000n, inv, 6, 18)).toBe(0n)
    expect(deviationBps((eth * 9_950n) / 10_000n, 3_000_000_000n, inv, 6, 18)).toBe(50n)
  })

  it('the sanity check is exact at the threshold: 100 bps passes, one unit more does not', () => {
    const p = toPriceRatio('3000')
    const eth = 10n ** 18n
    expect(exceedsDeviation(2_970_000_000n, eth, p, 18, 6, 100)).toBe(false)
    expect(exceedsDeviation(2_969_999_999n, eth, p, 18, 6, 100)).toBe(true)
    expect(exceedsDeviation(3_030_000_000n, eth, p, 18, 6, 100)).toBe(false)
    expect(exceedsDeviation(3_030_000_001n, eth, p, 18, 6, 100)).toBe(true)
  })
})
