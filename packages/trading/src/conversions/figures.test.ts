import { describe, expect, it } from 'vitest'
import {
  conversionAmountIn,
  costBasisAfter,
  inPreConvertWindow,
  inTheMoney,
  swapIndexPrice,
  unitsOfE18,
} from './figures'

const e18 = (n: bigint) => n * 10n ** 18n
const usdc = (n: bigint) => n * 1_000_000n

describe('conversion rounds (pure)', () => {
  it('in the money is strict', () => {
    expect(inTheMoney('put', e18(3000n), e18(2999n))).toBe(true)
    expect(inTheMoney('put', e18(3000n), e18(3000n))).toBe(false)
    expect(inTheMoney('call', e18(3000n), e18(3001n))).toBe(true)
    expect(inTheMoney('call', e18(3000n), e18(3000n))).toBe(false)
  })

  it('the pre-conversion window is the last lead minutes before expiry, expiry excluded', () => {
    const expirySec = 1_800_000_000
    const at = (msBefore: number) => expirySec * 1000 - msBefore
    expect(inPreConvertWindow(expirySec, at(10 * 60_000), 10)).toBe(true)
    expect(inPreConvertWindow(expirySec, at(10 * 60_000 + 1), 10)).toBe(false)
    expect(inPreConvertWindow(expirySec, at(0), 10)).toBe(false)
  })

  it('before expiry a put round keeps the settlement ahead and the buffer, and buys at most the size', () => {
    // 1 ETH put at 3000, index 2900: settlement ahead 100 USDC (+1 unit for rounding), buffer 100
    const base = {
      direction: 'to_underlying' as const,
      trigger: 'pre_expiry' as const,
      claimedByOthers: 0n,
      strikeE18: e18(3000n),
      sizeE18: e18(1n),
      indexE18: e18(2900n),
      bufferUsdc: usdc(100n),
    }
    // plenty of cash: the size at the index
    expect(conversionAmountIn({ ...base, held: usdc(3200n) })).toBe(usdc(2900n))
    // short: cash less settlement ahead less buffer
    expect(conversionAmountIn({ ...base, held: usdc(3000n) })).toBe(usdc(2800n) - 1n)
    // others' claims come first
    expect(conversionAmountIn({ ...base, held: usdc(3050n), claimedByOthers: usdc(3000n) })).toBe(0n)
    // after settlement nothing is ahead
    expect(conversionAmountIn({ ...base, trigger: 'after_settlement', held: usdc(2950n) })).toBe(usdc(2850n))
  })

  it('a call round sells all the unclaimed underlying', () => {
    const r = conversionAmountIn({
      direction: 'to_cash',
      trigger: 'pre_expiry',
      held: e18(2n),
      claimedByOthers: e18(1n) / 2n,
      strikeE18: e18(3000n),
      sizeE18: e18(1n),
      indexE18: e18(3100n),
      bufferUsdc: usdc(100n),
    })
    expect(r).toBe(e18(3n) / 2n)
  })

  it('the cost basis is what the underlying cost per unit, rounded up, never below the strike', () => {
    // 2,910 USDC bought 0.97 ETH: 3000.0000…03 per unit > strike 2,950
    const basis = costBasisAfter({
      strikeE18: e18(2950n),
      usdcIn: usdc(2910n),
      settlementPaid: 0n,
      unitsOut: 97n * 10n ** 16n,
      decimals: 18,
    })
    expect(basis).toBe(e18(3000n))
    // with a settlement paid, it counts
    expect(
      costBasisAfter({
        strikeE18: e18(2950n),
        usdcIn: usdc(2900n),
        settlementPaid: usdc(100n),
        unitsOut: e18(1n),
        decimals: 18,
      }),
    ).toBe(e18(3000n))
    // a cheap fill still carries the strike
    expect(
      costBasisAfter({
        strikeE18: e18(3000n),
        usdcIn: usdc(2800n),
        settlementPaid: 0n,
        unitsOut: e18(1n),
        decimals: 18,
      }),
    ).toBe(e18(3000n))
    // an odd division rounds up
    expect(costBasisAfter({ strikeE18: 1n, usdcIn: 1n, settlementPaid: 0n, unitsOut: 3n, decimals: 0 })).toBe(
      (10n ** 12n + 2n) / 3n,
    )
  })

  it('swap index prices are exact ratios in the direction of the swap', () => {
    expect(swapIndexPrice('to_cash', e18(3000n))).toEqual({ num: e18(3000n), den: e18(1n) })
    expect(swapIndexPrice('to_underlying', e18(3000n))).toEqual({ num: e18(1n), den: e18(3000n) })
    expect(unitsOfE18(e18(3n) / 2n, 8)).toBe(150_000_000n)
  })
})
