/**
 * POST /quotes (docs/trading.md "Economics"): before a position starts, what the leg the placing
 * tick would sell now yields at the current marks: instrument, size, premium, the exchange's and
 * the platform's fees, the net, each fee's share of the premium and the yields. Read from the
 * exchange's public endpoints (chain.ts); the maths is @wh/trading's economics.
 */
import { PositionQuote, QuoteBody } from '@wh/api-schemas/quotes'
import {
  bpsToNumber,
  type Clock,
  decimalsOf,
  formatE18,
  formatUsdc,
  fromBaseUnits,
  systemClock,
  toBaseUnits,
} from '@wh/core'
import {
  applyWheelSettings,
  type ChainReader,
  FeesExceedPremiumShareError,
  type MinimumSize,
  minimumSizes,
  type PositionQuote as Quote,
  type QuoteSettings,
  quotePosition,
  resolveWheelSettings,
  SettingsNotForLegError,
  type TradingProfile,
  type WheelSettings,
  type WheelSettingsInput,
} from '@wh/trading'
import type { FastifyInstance } from 'fastify'
import type Type from 'typebox'
import { currentUser, requireAuth } from '../../plugins/auth'

export interface QuoteRoutesOptions {
  chain: ChainReader
  settings: QuoteSettings
  clock?: Clock
}

/** The API's answer for a quote (decimal strings; shares and yields as integer bps). */
export function quoteBody(q: Quote, s: QuoteSettings, collateral: bigint, at: Date) {
  const e = q.economics
  const warning = e.exceedsFeeShare
    ? {
        code: 'FEES_EXCEED_PREMIUM_SHARE' as const,
        message: new FeesExceedPremiumShareError(q, s.maxFeeShareBps).message,
      }
    : null
  return {
    asset: q.asset,
    side: q.legSide,
    collateralCurrency: q.collateralCurrency,
    collateral: fromBaseUnits(collateral, q.collateralDecimals),
    instrument: e.instrument,
    strike: formatE18(e.strikeE18),
    expiry: new Date(e.expirySec * 1000).toISOString(),
    mark: formatE18(e.markE18),
    index: formatE18(e.indexE18),
    size: formatE18(e.sizeE18),
    minimumSize: formatE18(e.minimumSizeE18),
    premium: formatUsdc(e.premium),
    exchangeFee: formatUsdc(e.exchangeFee),
    exchangeFeeMaker: formatUsdc(e.exchangeFeeMaker),
    exchangeFeeTaker: formatUsdc(e.exchangeFeeTaker),
    platformFee: formatUsdc(e.platformFee),
    netPremium: formatUsdc(e.netPremium),
    exchangeFeeShareBps: bpsToNumber(e.exchangeFeeShareBps),
    platformFeeShareBps: bpsToNumber(e.platformFeeShareBps),
    feeShareBps: bpsToNumber(e.feeShareBps),
    annualisedYieldBps: bpsToNumber(e.annualisedYieldBps),
    netAnnualisedYieldBps: bpsToNumber(e.netAnnualisedYieldBps),
    maxFeeShareBps: s.maxFeeShareBps,
    feeSharePolicy: s.policy,
    wouldPlace: e.blocker === null,
    reason: e.blocker,
    warning,
    quotedAt: at.toISOString(),
  }
}

/** GET /trading-config's `minimumSizes` entry of one side. */
export function minimumSizeBody(m: MinimumSize, asset: string) {
  const o = m.option
  const common = {
    side: m.side,
    instrument: o?.quote.instrument ?? null,
    mark: o ? formatE18(o.quote.markE18) : null,
    index: o ? formatE18(o.indexE18) : null,
  }
  if ('reason' in m)
    return {
      ...common,
      contracts: null,
      collateral: null,
      collateralCurrency: m.side === 'put' ? 'USDC' : asset,
      reason: m.reason,
    }
  return {
    ...common,
    contracts: formatE18(m.contractsE18),
    collateral: fromBaseUnits(m.collateral, m.collateralDecimals),
    collateralCurrency: m.collateralCurrency,
    reason: null,
  }
}

/** Every asset's minimum sizes, as GET /trading-config shows them. */
export async function minimumSizesBody(chain: ChainReader, s: QuoteSettings, assets: readonly string[], now: Date) {
  const entries = await Promise.all(
    assets.map(async (a) => {
      const sizes = await minimumSizes(chain, a as 'ETH' | 'BTC', s, now.getTime())
      return [a, sizes.map((m) => minimumSizeBody(m, a))] as const
    }),
  )
  return {
    maxFeeShareBps: s.maxFeeShareBps,
    feeSharePolicy: s.policy,
    computedAt: now.toISOString(),
    assets: Object.fromEntries(entries),
  }
}

/**
 * A wheel's settings as they would apply (the profile's where none is given), as POST /positions
 * stores them: 400 SETTINGS_ONLY_FOR_WHEEL on a put or a call, 422 SETTING_OUT_OF_BOUNDS outside the
 * profile's bounds; undefined without settings.
 */
export function settingsInEffect(
  body: { side: string; settings?: WheelSettingsInput | undefined },
  profile: TradingProfile,
): WheelSettings | undefined {
  if (!body.settings) return undefined
  if (body.side !== 'wheel') throw new SettingsNotForLegError()
  return resolveWheelSettings(applyWheelSettings(undefined, body.settings, profile), profile)
}

export default async function quoteRoutes(app: FastifyInstance, opts: QuoteRoutesOptions) {
  requireAuth(app)
  const clock = opts.clock ?? systemClock
  app.post<{ Body: Type.Static<typeof QuoteBody> }>(
    '/quotes',
    {
      schema: {
        tags: ['positions'],
        summary: 'What a position would yield now: the strike the placing tick would sell, premium, fees and net',
        description:
          'The body is the one of POST /positions. The leg is chosen as the placing tick would choose it now (the ' +
          "profile's expiry and target delta, or a wheel's `settings`) and priced at the mark; fees are the exchange's (maker, or taker with " +
          "its base fee when the profile crosses at the window's end) and the platform's. `warning` is set when " +
          'fees exceed MAX_FEE_SHARE_BPS of the premium. 422 NO_QUOTE when the tick would sell nothing now, 503 ' +
          'QUOTE_UNAVAILABLE when the exchange cannot be read.',
        body: QuoteBody,
        response: {
          200: PositionQuote,
          400: { $ref: 'ErrorBody#' },
          422: { $ref: 'ErrorBody#' },
          503: { $ref: 'ErrorBody#' },
        },
      },
    },
    async (request) => {
      currentUser(request)
      const { asset, side } = request.body
      const currency = side === 'call' ? asset : 'USDC'
      // more decimals than the collateral has is a 400, as in POST /positions
      const amount = toBaseUnits(request.body.amount, decimalsOf(currency) ?? 0, 'exact')
      const settings = settingsInEffect(request.body, opts.settings.profile)
      const now = clock.now()
      const q = await quotePosition(
        opts.chain,
        { asset, side, amount, ...(settings && { settings }) },
        opts.settings,
        now.getTime(),
      )
      return quoteBody(q, opts.settings, amount, now)
    },
  )
}
