import { describe, expect, it } from 'vitest'
import {
  type ChainOption,
  chooseFromChain,
  collateralFor,
  cumulativeNets,
  cycleNet,
  exchangeFees,
  legEconomics,
  minimumSensibleSize,
  type OptionFeeSchedule,
  shareBps,
  wheelVersusHold,
} from './economics'
import { E18, type OptionQuote } from './placing'
import { tradingProfile } from './profiles'

// Derive's published option schedule (packages/exchange protocol/fee-schedule.ts)
const FEES: OptionFeeSchedule = {
  makerRate: 3n * 10n ** 14n,
  takerRate: 4n * 10n ** 14n,
  baseFee: E18 / 2n,
  capRate: E18 / 8n,
}
const usdc = (n: number) => BigInt(Math.round(n * 1e6))
const e18 = (n: number) => BigInt(Math.round(n * 1e6)) * 10n ** 12n
const NOW = Date.UTC(2026, 10, 23, 8)
const EXPIRY = NOW / 1000 + 5 * 86_400
const quote = (strike: number, type: 'P' | 'C', deltaBps: number, mark: number, expirySec = EXPIRY): OptionQuote => ({
  instrument: `ETH-X-${strike}-${type}`,
  expirySec,
  strikeE18: e18(strike),
  type,
  deltaBps,
  markE18: e18(mark),
})
const option = (q: OptionQuote): ChainOption => ({
  quote: q,
  amountStepE18: E18 / 100n,
  minimumAmountE18: E18 / 100n,
  indexE18: e18(3000),
  fees: FEES,
})

describe('economics of a leg', () => {
  it('exchange fees: maker rate on the notional, taker base fee plus its rate, capped by the option value', () => {
    expect(exchangeFees(FEES, 2n * E18, e18(20), e18(3000))).toEqual({ maker: usdc(1.8), taker: usdc(2.9) })
    // a cheap option: the rate part is capped at 12.5 % of 2 × 1 USD = 0.25; the base fee comes on top
    expect(exchangeFees(FEES, 2n * E18, e18(1), e18(3000))).toEqual({ maker: usdc(0.25), taker: usdc(0.75) })
    expect(shareBps(1n, 3n)).toBe(3334n) // rounded up: a share is never understated
    expect(shareBps(1n, 0n)).toBeNull()
  })

  it('a put: size, premium, fees split, net, shares and yields at the mark', () => {
    const e = legEconomics({
      side: 'put',
      pick: quote(2700, 'P', -2000, 20),
      amountStepE18: E18 / 100n,
      minimumAmountE18: E18 / 100n,
      indexE18: e18(3000),
      collateral: usdc(5400),
      collateralDecimals: 6,
      nowMs: NOW,
      profile: tradingProfile('balanced'),
      profileMinE18: E18 / 10n,
      platformFeeRate: '0.1',
      fees: FEES,
      maxFeeShareBps: 2000,
    })
    expect(e).toMatchObject({
      sizeE18: 2n * E18,
      premium: usdc(40),
      exchangeFeeMaker: usdc(1.8),
      exchangeFeeTaker: usdc(2.9), // balanced crosses at the window's end: the worst case is taker
      exchangeFee: usdc(2.9),
      platformFee: usdc(4),
      netPremium: usdc(33.1),
      exchangeFeeShareBps: 725n,
      platformFeeShareBps: 1000n,
      feeShareBps: 1725n,
      annualisedYieldBps: 5407n, // 20 / 2700 × 365 / 5
      netAnnualisedYieldBps: 4474n, // 33.1 / 5400 × 365 / 5
      blocker: null,
      exceedsFeeShare: false,
    })
  })

  it('a profile that never crosses pays maker fees only; a small size exceeds the share through the base fee', () => {
    const base = {
      side: 'put' as const,
      pick: quote(2700, 'P', -1000, 20),
      amountStepE18: E18 / 100n,
      minimumAmountE18: E18 / 100n,
      indexE18: e18(3000),
      collateralDecimals: 6,
      nowMs: NOW,
      profileMinE18: E18 / 10n,
      platformFeeRate: '0.1',
      fees: FEES,
      maxFeeShareBps: 2000,
    }
    const maker = legEconomics({ ...base, collateral: usdc(540), profile: tradingProfile('conservative') })
    expect(maker).toMatchObject({ exchangeFeeTaker: null, exchangeFee: usdc(0.18), exceedsFeeShare: false })
    const small = legEconomics({ ...base, collateral: usdc(540), profile: tradingProfile('balanced') })
    // 0.2 contracts: premium 4, taker 0.5 + 0.24, platform 0.4 → 28.5 %
    expect(small).toMatchObject({
      premium: usdc(4),
      exchangeFee: usdc(0.74),
      feeShareBps: 2850n,
      exceedsFeeShare: true,
    })
    const tiny = legEconomics({ ...base, collateral: usdc(100), profile: tradingProfile('balanced') })
    expect(tiny.blocker).toMatch(/fewer contracts than the minimum/)
  })

  it('the smallest sensible size: the base fee over the room the proportional parts leave', () => {
    const o = {
      profileMinE18: E18 / 10n,
      platformFeeRate: '0.1',
      maxFeeShareBps: 2000,
      nowMs: NOW,
    }
    const put = option(quote(2700, 'P', -2000, 20))
    // room = 0.20 − 0.10 − 3000 × 0.0004 / 20 = 0.04 → 0.5 / (20 × 0.04) = 0.625 → 0.63 on the step
    expect(minimumSensibleSize(put, 'put', { ...o, profile: tradingProfile('balanced') })).toBe(e18(0.63))
    // maker only: the share does not depend on the size; the profile's minimum
    expect(minimumSensibleSize(put, 'put', { ...o, profile: tradingProfile('conservative') })).toBe(e18(0.1))
    // the platform's 10 % and the rate part alone exceed 10 %: no size qualifies
    expect(
      minimumSensibleSize(put, 'put', { ...o, maxFeeShareBps: 1000, profile: tradingProfile('balanced') }),
    ).toBeNull()
    expect(collateralFor('put', e18(0.63), e18(2700), 6)).toBe(usdc(1701))
    expect(collateralFor('call', e18(0.63), e18(2700), 18)).toBe(e18(0.63))
  })

  it('chooses as the placing tick: nearest expiry in the window, strike nearest the target delta', () => {
    const later = EXPIRY + 86_400
    const chain = [
      option(quote(2700, 'P', -2000, 20, NOW / 1000 + 3600)), // too near
      option(quote(2700, 'P', -2100, 20)),
      option(quote(2800, 'P', -3000, 30)),
      option(quote(2600, 'P', -1900, 15, later)),
    ]
    const r = chooseFromChain(chain, 'put', NOW, tradingProfile('balanced'))
    expect('option' in r && r.option.quote.instrument).toBe('ETH-X-2700-P')
    expect(chooseFromChain(chain, 'call', NOW, tradingProfile('balanced'))).toEqual({
      reason: 'no strike near the target delta',
    })
    expect(chooseFromChain([], 'put', NOW, tradingProfile('balanced'))).toEqual({
      reason: 'no expiry inside the profile tenor window',
    })
  })
})

describe('economics of a wheel', () => {
  const win = { premium: usdc(40), exchangeFee: usdc(2), platformFee: usdc(4), settlementCost: 0n, closeCost: 0n }
  const loss = {
    premium: usdc(30),
    exchangeFee: usdc(2),
    platformFee: usdc(3),
    settlementCost: usdc(100),
    closeCost: 0n,
  }

  it('nets each cycle and sums them, losing cycles included', () => {
    expect(cycleNet(win)).toBe(usdc(34))
    expect(cycleNet(loss)).toBe(usdc(-75))
    expect(cycleNet({ ...win, closeCost: usdc(50) })).toBe(usdc(-16))
    expect(cumulativeNets([win, loss, win])).toEqual([usdc(34), usdc(-41), usdc(-7)])
  })

  it('compares the realised return with holding the underlying from the start price', () => {
    expect(wheelVersusHold(usdc(1000), usdc(-41), e18(3000), e18(2700))).toEqual({
      wheelReturnBps: -410n,
      holdValue: usdc(900),
      holdReturnBps: -1000n,
    })
    expect(wheelVersusHold(usdc(1000), usdc(34), null, e18(2700))).toEqual({
      wheelReturnBps: 340n,
      holdValue: null,
      holdReturnBps: null,
    })
  })
})
