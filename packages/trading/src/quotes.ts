/**
 * Quotes before a position starts (docs/trading.md "Economics"): the leg the placing tick would
 * sell now for a request, with its fees and net, the fee-share policy POST /positions applies, and
 * the smallest sensible size per asset. The option chain is read by the caller's reader (the API
 * reads the exchange's public endpoints); everything else is the pure maths of economics.ts.
 */
import { AppError, BusinessRuleError, decimalsOf, fromBaseUnits, toBaseUnits, type Underlying } from '@wh/core'
import {
  type ChainOption,
  chooseFromChain,
  collateralFor,
  type LegEconomics,
  legEconomics,
  minimumSensibleSize,
} from './economics'
import { chooseExpiry } from './placing'
import { collateralCurrencyOf } from './positions'
import type { TradingProfile } from './profiles'
import { chooseStrikeByOtm, selectionProfile, type WheelSettings } from './wheel-settings'

/**
 * The options of the expiry the tick would pick now for a side (see apps/api/src/routes/quotes/chain.ts),
 * under `rule`'s tenor window (a wheel's settings, `selectionProfile`; the reader's profile without one).
 */
export type ChainReader = (
  asset: string,
  side: 'put' | 'call',
  nowMs: number,
  rule?: TradingProfile,
) => Promise<ChainOption[]>

export type FeeSharePolicy = 'refuse' | 'warn' | 'off'

export interface QuoteSettings {
  readonly profile: TradingProfile
  readonly platformFeeRate: string
  readonly maxFeeShareBps: number
  readonly policy: FeeSharePolicy
}

export interface QuoteRequest {
  readonly asset: Underlying
  readonly side: 'put' | 'call' | 'wheel'
  /** collateral in its currency's base units (USDC for a put or a wheel, the underlying for a call) */
  readonly amount: bigint
  /** a wheel's settings in effect: its first leg is chosen by them, as the placing tick will (docs/trading.md "Wheel settings") */
  readonly settings?: WheelSettings
}

export interface PositionQuote {
  readonly asset: Underlying
  readonly legSide: 'put' | 'call'
  readonly collateralCurrency: string
  readonly collateralDecimals: number
  readonly economics: LegEconomics
}

/** The exchange could not be read (transport, an error answer): 503, retry shortly. */
export class QuoteChainUnavailableError extends AppError {
  constructor(asset: string, cause?: unknown) {
    super({
      code: 'QUOTE_UNAVAILABLE',
      statusCode: 503,
      retryable: true,
      message: `the ${asset} options could not be read from the exchange right now, try again shortly`,
      details: { asset },
      ...(cause === undefined ? {} : { cause }),
    })
  }
}

/** Nothing the placing tick would sell now (no expiry in the window, no strike near the target delta). */
export class NothingToQuoteError extends BusinessRuleError {
  constructor(asset: string, side: string, reason: string) {
    super('NO_QUOTE', `nothing to quote for a ${asset} ${side} now: ${reason}`, { asset, side, reason })
  }
}

const usd = (v: bigint) => fromBaseUnits(v, 6)

/** The figures a fee warning or refusal carries (decimal strings, USDC; shares in bps). */
export function feeFigures(q: PositionQuote, maxFeeShareBps: number) {
  const e = q.economics
  return {
    instrument: e.instrument,
    size: fromBaseUnits(e.sizeE18, 18),
    premium: usd(e.premium),
    exchangeFee: usd(e.exchangeFee),
    platformFee: usd(e.platformFee),
    netPremium: usd(e.netPremium),
    feeShareBps: e.feeShareBps === null ? null : Number(e.feeShareBps),
    maxFeeShareBps,
  }
}

/** POST /positions under FEE_SHARE_POLICY=refuse: fees would take more than the allowed share. */
export class FeesExceedPremiumShareError extends BusinessRuleError {
  constructor(q: PositionQuote, maxFeeShareBps: number) {
    const f = feeFigures(q, maxFeeShareBps)
    super(
      'FEES_EXCEED_PREMIUM_SHARE',
      `fees would take ${f.feeShareBps ?? 'all'} bps of the ${f.premium} USDC premium, above the ${maxFeeShareBps} bps allowed: commit more collateral`,
      f,
    )
  }
}

const profileMinE18 = (p: TradingProfile, asset: Underlying) => toBaseUnits(p.sizes[asset]?.min ?? '0', 18, 'down')

/** The leg the placing tick would sell now for this request, at the current marks. */
export async function quotePosition(
  read: ChainReader,
  req: QuoteRequest,
  s: QuoteSettings,
  nowMs: number,
): Promise<PositionQuote> {
  const legSide = req.side === 'wheel' ? 'put' : req.side
  const collateralCurrency = collateralCurrencyOf(req.asset, legSide)
  const collateralDecimals = decimalsOf(collateralCurrency) ?? 18
  const rule = req.settings ? selectionProfile(s.profile, req.settings) : s.profile
  let chain: ChainOption[]
  try {
    chain = await read(req.asset, legSide, nowMs, rule)
  } catch (e) {
    throw new QuoteChainUnavailableError(req.asset, e)
  }
  const choice = chooseQuoted(chain, legSide, nowMs, rule, req.settings)
  if ('reason' in choice) throw new NothingToQuoteError(req.asset, legSide, choice.reason)
  const o = choice.option
  const economics = legEconomics({
    side: legSide,
    pick: o.quote,
    amountStepE18: o.amountStepE18,
    minimumAmountE18: o.minimumAmountE18,
    indexE18: o.indexE18,
    collateral: req.amount,
    collateralDecimals,
    nowMs,
    profile: s.profile,
    profileMinE18: profileMinE18(s.profile, req.asset),
    platformFeeRate: s.platformFeeRate,
    fees: o.fees,
    maxFeeShareBps: s.maxFeeShareBps,
  })
  return { asset: req.asset, legSide, collateralCurrency, collateralDecimals, economics }
}

/**
 * The leg a quote prices: the placing tick's choice under `rule` (a wheel's tenor window and target
 * delta), or by distance from the index when the wheel's strike is set so (`chooseStrikeByOtm`,
 * the profile's tolerance), as the placing step picks it (placing/choose.ts).
 */
function chooseQuoted(
  chain: readonly ChainOption[],
  side: 'put' | 'call',
  nowMs: number,
  rule: TradingProfile,
  settings: WheelSettings | undefined,
): { option: ChainOption } | { reason: string } {
  if (settings?.strikeBy !== 'otm') return chooseFromChain(chain, side, nowMs, rule)
  const expiry = chooseExpiry(
    chain.map((c) => c.quote.expirySec),
    nowMs,
    rule,
  )
  if (expiry === undefined) return { reason: 'no expiry inside the tenor window' }
  const candidates = chain.filter((c) => c.quote.expirySec === expiry)
  const index = candidates[0]?.indexE18 ?? 0n
  const tolerance = rule.wheelSettingBounds.otmToleranceBps
  const pick = chooseStrikeByOtm(
    candidates.map((c) => c.quote),
    side,
    index,
    settings.otmBps,
    tolerance,
  )
  const option = pick && candidates.find((c) => c.quote.instrument === pick.instrument)
  return option ? { option } : { reason: 'no strike near the target distance from the index' }
}

export interface FeeWarning {
  readonly code: 'FEES_EXCEED_PREMIUM_SHARE' | 'FEES_NOT_CHECKED'
  readonly message: string
}

/**
 * The fee-share check of POST /positions: `off` reads nothing; otherwise the request is quoted.
 * Fees above the share: `refuse` throws FeesExceedPremiumShareError (422), `warn` answers a
 * warning. A quote that cannot be made: the exchange unreadable under `refuse` is a 503 (the check
 * cannot pass unseen); otherwise the position is accepted with a FEES_NOT_CHECKED warning (the
 * tick waits for a strike anyway).
 */
export async function checkFeeShare(
  read: ChainReader,
  req: QuoteRequest,
  s: QuoteSettings,
  nowMs: number,
): Promise<FeeWarning | undefined> {
  if (s.policy === 'off') return undefined
  let q: PositionQuote
  try {
    q = await quotePosition(read, req, s, nowMs)
  } catch (e) {
    if (e instanceof QuoteChainUnavailableError && s.policy === 'refuse') throw e
    if (e instanceof QuoteChainUnavailableError || e instanceof NothingToQuoteError)
      return { code: 'FEES_NOT_CHECKED', message: `the fees could not be checked: ${e.message}` }
    throw e
  }
  if (!q.economics.exceedsFeeShare) return undefined
  const refusal = new FeesExceedPremiumShareError(q, s.maxFeeShareBps)
  if (s.policy === 'refuse') throw refusal
  return { code: 'FEES_EXCEED_PREMIUM_SHARE', message: refusal.message }
}

export type MinimumSize =
  | {
      readonly side: 'put' | 'call'
      readonly contractsE18: bigint
      readonly collateral: bigint
      readonly collateralCurrency: string
      readonly collateralDecimals: number
      readonly option: ChainOption
    }
  | { readonly side: 'put' | 'call'; readonly reason: string; readonly option?: ChainOption }

/**
 * The smallest size of each side of `asset` whose fees stay within the share at the current marks
 * of the strike the tick would choose now (economics.ts `minimumSensibleSize`).
 */
export async function minimumSizes(
  read: ChainReader,
  asset: Underlying,
  s: QuoteSettings,
  nowMs: number,
): Promise<MinimumSize[]> {
  return Promise.all(
    (['put', 'call'] as const).map(async (side): Promise<MinimumSize> => {
      let chain: ChainOption[]
      try {
        chain = await read(asset, side, nowMs)
      } catch {
        return { side, reason: 'the exchange could not be read' }
      }
      const choice = chooseFromChain(chain, side, nowMs, s.profile)
      if ('reason' in choice) return { side, reason: choice.reason }
      const option = choice.option
      const contractsE18 = minimumSensibleSize(option, side, {
        profile: s.profile,
        profileMinE18: profileMinE18(s.profile, asset),
        platformFeeRate: s.platformFeeRate,
        maxFeeShareBps: s.maxFeeShareBps,
        nowMs,
      })
      if (contractsE18 === null)
        return { side, option, reason: 'fees exceed the share at any size at the current marks' }
      const collateralCurrency = collateralCurrencyOf(asset, side)
      const collateralDecimals = decimalsOf(collateralCurrency) ?? 18
      const collateral = collateralFor(side, contractsE18, option.quote.strikeE18, collateralDecimals)
      return { side, contractsE18, collateral, collateralCurrency, collateralDecimals, option }
    }),
  )
}
