import { describe, expect, it } from 'vitest'
import type { ChainOption, OptionFeeSchedule } from './economics'
import { E18 } from './placing'
import { tradingProfile } from './profiles'
import {
  type ChainReader,
  checkFeeShare,
  FeesExceedPremiumShareError,
  minimumSizes,
  NothingToQuoteError,
  QuoteChainUnavailableError,
  type QuoteSettings,
  quotePosition,
} from './quotes'

const FEES: OptionFeeSchedule = {
  makerRate: 3n * 10n ** 14n,
  takerRate: 4n * 10n ** 14n,
  baseFee: E18 / 2n,
  capRate: E18 / 8n,
}
const e18 = (n: number) => BigInt(Math.round(n * 1e6)) * 10n ** 12n
const NOW = Date.UTC(2026, 10, 23, 8)
const put: ChainOption = {
  quote: {
    instrument: 'ETH-X-2700-P',
    expirySec: NOW / 1000 + 5 * 86_400,
    strikeE18: e18(2700),
    type: 'P',
    deltaBps: -2000,
    markE18: e18(20),
  },
  amountStepE18: E18 / 100n,
  minimumAmountE18: E18 / 100n,
  indexE18: e18(3000),
  fees: FEES,
}
const chainOf =
  (options: ChainOption[]): ChainReader =>
  async () =>
    options
const down: ChainReader = async () => {
  throw new Error('connection refused')
}
const settings = (policy: QuoteSettings['policy'], maxFeeShareBps = 2000): QuoteSettings => ({
  profile: tradingProfile('balanced'),
  platformFeeRate: '0.1',
  maxFeeShareBps,
  policy,
})
const req = (usdc: number) => ({ asset: 'ETH' as const, side: 'put' as const, amount: BigInt(usdc) * 1_000_000n })

describe('quotes and the fee-share policy', () => {
  it('quotes a wheel as its first put, with the USDC collateral', async () => {
    const q = await quotePosition(chainOf([put]), { ...req(5400), side: 'wheel' }, settings('warn'), NOW)
    expect(q).toMatchObject({ legSide: 'put', collateralCurrency: 'USDC', collateralDecimals: 6 })
    expect(q.economics).toMatchObject({ sizeE18: 2n * E18, feeShareBps: 1725n, exceedsFeeShare: false })
  })

  it('an unreadable chain is QUOTE_UNAVAILABLE (503); nothing to sell is NO_QUOTE (422)', async () => {
    await expect(quotePosition(down, req(5400), settings('warn'), NOW)).rejects.toBeInstanceOf(
      QuoteChainUnavailableError,
    )
    await expect(quotePosition(chainOf([]), req(5400), settings('warn'), NOW)).rejects.toBeInstanceOf(
      NothingToQuoteError,
    )
  })

  it('refuse throws the figures, warn answers a warning, off reads nothing', async () => {
    // 540 USDC: 0.2 contracts, premium 4, taker 0.74, platform 0.4 → 2850 bps
    const refused = await checkFeeShare(chainOf([put]), req(540), settings('refuse'), NOW).catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(FeesExceedPremiumShareError)
    expect((refused as FeesExceedPremiumShareError).details).toEqual({
      instrument: 'ETH-X-2700-P',
      size: '0.200000000000000000',
      premium: '4.000000',
      exchangeFee: '0.740000',
      platformFee: '0.400000',
      netPremium: '2.860000',
      feeShareBps: 2850,
      maxFeeShareBps: 2000,
    })
    expect(await checkFeeShare(chainOf([put]), req(540), settings('warn'), NOW)).toMatchObject({
      code: 'FEES_EXCEED_PREMIUM_SHARE',
    })
    expect(await checkFeeShare(chainOf([put]), req(5400), settings('refuse'), NOW)).toBeUndefined()
    expect(await checkFeeShare(down, req(540), settings('off'), NOW)).toBeUndefined()
  })

  it('without a quote: refuse is a 503 when the exchange is unreadable, otherwise a FEES_NOT_CHECKED warning', async () => {
    await expect(checkFeeShare(down, req(540), settings('refuse'), NOW)).rejects.toBeInstanceOf(
      QuoteChainUnavailableError,
    )
    expect(await checkFeeShare(down, req(540), settings('warn'), NOW)).toMatchObject({ code: 'FEES_NOT_CHECKED' })
    expect(await checkFeeShare(chainOf([]), req(540), settings('refuse'), NOW)).toMatchObject({
      code: 'FEES_NOT_CHECKED',
    })
  })

  it('minimum sizes per side, with the reason where there is none', async () => {
    const sizes = await minimumSizes(chainOf([put]), 'ETH', settings('warn'), NOW)
    expect(sizes[0]).toMatchObject({ side: 'put', contractsE18: e18(0.63), collateral: 1_701_000_000n })
    expect(sizes[1]).toEqual({ side: 'call', reason: 'no strike near the target delta' })
    expect(await minimumSizes(down, 'ETH', settings('warn'), NOW)).toEqual([
      { side: 'put', reason: 'the exchange could not be read' },
      { side: 'call', reason: 'the exchange could not be read' },
    ])
  })
})
