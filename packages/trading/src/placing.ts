/**
 * The pure decisions of the placing step (docs/trading.md "Placing"): which expiry, which strike,
 * how many contracts, at what price, and what the platform keeps of a premium. Prices, strikes and
 * amounts are e18 bigints (the exchange's units); deltas and rates are integer basis points.
 */
import { toBaseUnits } from '@wh/core'
import { type Instrument, type Ticker, toE18 } from '@wh/exchange'
import type { TradingProfile } from './profiles'

export const E18 = 10n ** 18n
const BPS = 10_000n

export interface OptionQuote {
  readonly instrument: string
  readonly expirySec: number
  readonly strikeE18: bigint
  readonly type: 'P' | 'C'
  /** the option's delta in basis points, signed as the exchange gives it (puts negative) */
  readonly deltaBps: number
  readonly markE18: bigint
}

/**
 * An option of `expirySec` as the placing step weighs it, from the exchange's instrument and
 * ticker; undefined when the ticker has no option pricing (no delta to choose by). The delta, a
 * display figure, becomes basis points as the price feed's instruments do (strategy-cycles.ts).
 */
export function optionQuoteOf(
  i: Pick<Instrument, 'instrument_name' | 'option_details'>,
  t: Pick<Ticker, 'option_pricing' | 'mark_price'>,
  expirySec: number,
  type: 'P' | 'C',
): OptionQuote | undefined {
  if (!t.option_pricing) return undefined
  return {
    instrument: i.instrument_name,
    expirySec,
    strikeE18: toE18(i.option_details?.strike ?? '0'),
    type,
    deltaBps: Math.round(Number(t.option_pricing.delta) * 10_000),
    markE18: toE18(t.mark_price),
  }
}

/**
 * The option's mark implied volatility in e18 (a fraction: 0.6 = 60 % is 6e17), as a leg records it
 * in `positions.iv_e18` when its instrument is chosen (GET /:asset/strategies and the chart show it
 * as `ivAtSale`). Null when the ticker has no option pricing or its IV is not a positive decimal: a
 * missing display figure must never stop a sale. Digits past the 18th decimal are dropped. IV is a
 * display figure, never used in an amount.
 * @example markIvE18({ option_pricing: { iv: '0.6', … } }) === 600_000_000_000_000_000n
 */
export function markIvE18(ticker: Pick<Ticker, 'option_pricing'>): bigint | null {
  const iv = ticker.option_pricing?.iv
  if (typeof iv !== 'string') return null
  try {
    const e18 = toBaseUnits(iv, 18, 'down')
    return e18 > 0n ? e18 : null
  } catch {
    return null // not a decimal (e.g. "NaN"): no figure rather than a failed placing step
  }
}

/** An expiry the placing step looked at: its tenor from now and whether it is inside the profile's window. */
export interface ExpiryCandidate {
  readonly expirySec: number
  /** hours from now to the expiry, two decimals */
  readonly tenorHours: number
  readonly inWindow: boolean
}

/** The expiries considered (each once, nearest first) and the one chosen, if any (docs/trading.md "Placing" 1). */
export interface ExpiryChoice {
  readonly candidates: readonly ExpiryCandidate[]
  readonly chosen: number | undefined
}

/** The nearest expiry at least `minTenorHours` away and at most `maxTenorDays` away, with every expiry seen. */
export function expiryChoice(expiriesSec: readonly number[], nowMs: number, p: TradingProfile): ExpiryChoice {
  const earliest = nowMs / 1000 + p.minTenorHours * 3600
  const latest = nowMs / 1000 + p.maxTenorDays * 86_400
  const candidates = [...new Set(expiriesSec)]
    .filter((e) => e > nowMs / 1000)
    .sort((a, b) => a - b)
    .map((e) => ({
      expirySec: e,
      tenorHours: Math.round((e - nowMs / 1000) / 36) / 100,
      inWindow: e >= earliest && e <= latest,
    }))
  return { candidates, chosen: candidates.find((c) => c.inWindow)?.expirySec }
}

/** The nearest expiry at least `minTenorHours` away and at most `maxTenorDays` away, if any. */
export function chooseExpiry(expiriesSec: readonly number[], nowMs: number, p: TradingProfile): number | undefined {
  return expiryChoice(expiriesSec, nowMs, p).chosen
}

/** Why a strike was not eligible (docs/trading.md "Placing" 1). */
export type StrikeExclusion = 'no_mark' | 'below_cost_basis' | 'outside_delta_tolerance'

/** A strike the placing step looked at, with its distance from the target delta and its yield. */
export interface StrikeCandidate {
  readonly quote: OptionQuote
  /** | |delta| − target |, basis points */
  readonly distanceBps: number
  /** the mark's annualised yield on the collateral (`annualisedYieldBps`), when the tenor and index were given */
  readonly yieldBps: bigint | undefined
  readonly excluded: StrikeExclusion | undefined
}

/** The strikes considered (by strike) and the one chosen, if any. */
export interface StrikeChoice {
  readonly candidates: readonly StrikeCandidate[]
  readonly chosen: OptionQuote | undefined
}

/** What a strike's yield is computed on: the time to expiry and the index (a call's collateral per contract). */
export interface YieldBasis {
  readonly tenorMs: number
  readonly indexE18: bigint
}

/**
 * Among one expiry's options of the side, the strike whose |delta| is nearest the target and within
 * the tolerance; a call's strike is never below `minStrikeE18` (the wheel's cost basis). Ties go to
 * the further out-of-the-money strike (lower for puts, higher for calls): less risk, same distance.
 * Every option of the side is returned as a candidate, with why it was not eligible.
 */
export function strikeChoice(
  quotes: readonly OptionQuote[],
  side: 'put' | 'call',
  p: TradingProfile,
  minStrikeE18 = 0n,
  basis?: YieldBasis,
): StrikeChoice {
  const target = side === 'put' ? p.putTargetDeltaBps : p.callTargetDeltaBps
  const type = side === 'put' ? 'P' : 'C'
  const candidates: StrikeCandidate[] = []
  let best: StrikeCandidate | undefined
  for (const q of [...quotes].sort((a, b) => (a.strikeE18 < b.strikeE18 ? -1 : a.strikeE18 > b.strikeE18 ? 1 : 0))) {
    if (q.type !== type) continue
    const distanceBps = Math.abs(Math.abs(q.deltaBps) - target)
    const excluded: StrikeExclusion | undefined =
      q.markE18 <= 0n
        ? 'no_mark'
        : side === 'call' && q.strikeE18 < minStrikeE18
          ? 'below_cost_basis'
          : distanceBps > p.deltaToleranceBps
            ? 'outside_delta_tolerance'
            : undefined
    const perContract = side === 'put' ? q.strikeE18 : (basis?.indexE18 ?? 0n)
    const yieldBps = basis ? annualisedYieldBps(q.markE18, perContract, basis.tenorMs) : undefined
    const c = { quote: q, distanceBps, yieldBps, excluded }
    candidates.push(c)
    if (excluded) continue
    const furtherOut =
      best !== undefined && (side === 'put' ? q.strikeE18 < best.quote.strikeE18 : q.strikeE18 > best.quote.strikeE18)
    if (best === undefined || distanceBps < best.distanceBps || (distanceBps === best.distanceBps && furtherOut))
      best = c
  }
  return { candidates, chosen: best?.quote }
}

/** The chosen strike of `strikeChoice`, if any. */
export function chooseStrike(
  quotes: readonly OptionQuote[],
  side: 'put' | 'call',
  p: TradingProfile,
  minStrikeE18 = 0n,
): OptionQuote | undefined {
  return strikeChoice(quotes, side, p, minStrikeE18).chosen
}

/**
 * Contracts a collateral secures, floored to the amount step: a put's USDC collateral (base units,
 * `collateralDecimals`) divided by the strike; a call's underlying collateral one for one.
 */
export function sizeFor(
  side: 'put' | 'call',
  collateral: bigint,
  collateralDecimals: number,
  strikeE18: bigint,
  amountStepE18: bigint,
): bigint {
  const collateralE18 = collateral * 10n ** BigInt(18 - collateralDecimals)
  const raw = side === 'put' ? (collateralE18 * E18) / strikeE18 : collateralE18
  return amountStepE18 > 0n ? (raw / amountStepE18) * amountStepE18 : raw
}

/** Rounds a price up to the tick (an ask is never below what the profile asked for). */
export function roundUpToTick(priceE18: bigint, tickE18: bigint): bigint {
  if (tickE18 <= 0n) return priceE18
  return ((priceE18 + tickE18 - 1n) / tickE18) * tickE18
}

/**
 * The ask at `elapsedMs` into the maker window: `makerStartAboveMarkBps` above the mark at the
 * start, stepping linearly (once per reprice) to the mark at the window's end.
 */
export function askPrice(markE18: bigint, elapsedMs: number, p: TradingProfile, tickE18: bigint): bigint {
  const steps = Math.max(1, Math.floor(p.makerWindowMs / p.repriceEveryMs))
  const step = Math.min(steps, Math.max(0, Math.floor(elapsedMs / p.repriceEveryMs)))
  const aboveBps = (BigInt(p.makerStartAboveMarkBps) * BigInt(steps - step)) / BigInt(steps)
  return roundUpToTick((markE18 * (BPS + aboveBps)) / BPS, tickE18)
}

/** The lowest price the end-of-window cross accepts: `maxCrossBelowMarkBps` under the mark. */
export function crossFloor(markE18: bigint, p: TradingProfile): bigint {
  return (markE18 * (BPS - BigInt(p.maxCrossBelowMarkBps))) / BPS
}

/**
 * The premium's annualised yield on the collateral it ties up, in basis points: premium per
 * contract over collateral per contract (the strike for a put, the index for a call), scaled to a
 * year. Integer arithmetic, rounded down.
 */
export function annualisedYieldBps(premiumE18: bigint, collateralPerContractE18: bigint, tenorMs: number): bigint {
  if (collateralPerContractE18 <= 0n || tenorMs <= 0) return 0n
  const year = 365n * 86_400_000n
  return (premiumE18 * BPS * year) / (collateralPerContractE18 * BigInt(Math.round(tenorMs)))
}

/**
 * The platform's share of a premium (PLATFORM_FEE_RATE, a decimal string such as "0.1"), rounded
 * down: the user is never charged a fraction more than the rate.
 */
export function platformFee(premium: bigint, rate: string): bigint {
  const m = /^(\d+)(?:\.(\d{1,18}))?$/.exec(rate)
  if (!m) throw new Error(`invalid fee rate ${rate}`)
  const frac = (m[2] ?? '').padEnd(18, '0')
  const rateE18 = BigInt(m[1] ?? '0') * E18 + BigInt(frac)
  if (rateE18 > E18) throw new Error(`fee rate ${rate} above 1`)
  return (premium * rateE18) / E18
}

/** Premium in USDC base units (6 decimals) of `amountE18` contracts at `priceE18`, rounded down. */
export function premiumUsdc(amountE18: bigint, priceE18: bigint): bigint {
  return (amountE18 * priceE18) / E18 / 10n ** 12n
}

/** Rounds a price down to the tick (a buy's limit never above what the user accepted). */
export function roundDownToTick(priceE18: bigint, tickE18: bigint): bigint {
  if (tickE18 <= 0n) return priceE18
  return (priceE18 / tickE18) * tickE18
}

/**
 * Buying a leg back (docs/trading.md "Buying a leg back"): the buy order may pay up to this much
 * above the quoted price (2 %). The quote is read when the user asks; the order goes out at the
 * next placing tick, seconds later, and the ask may have moved a little meanwhile. Above it, the
 * order buys nothing and the leg stays sold (the user asks again for a new quote).
 */
export const CLOSE_LIMIT_TOLERANCE_BPS = 200
/** Without an ask on the book, the quote is the mark plus this margin (5 %), rounded up to the tick. */
export const CLOSE_NO_ASK_MARGIN_BPS = 500

/** What a buy-back quote is read from: the instrument's ticker (e18; 0 when absent). */
export interface TickerPrices {
  readonly askE18: bigint
  readonly markE18: bigint
  readonly tickE18: bigint
}

/** A buy-back quote: per-unit price and limit (e18), the contracts to buy (e18) and its cost (USDC base units). */
export interface BuyBackQuote {
  readonly priceE18: bigint
  readonly limitE18: bigint
  readonly amountE18: bigint
  /** price × amount in USDC base units, rounded up (what the buy costs at the quoted price, fees apart) */
  readonly cost: bigint
  readonly quotedAt: Date
}

/**
 * The quoted price is kept on this grain (1e-14 USD, far below any tick), so the limit is an exact
 * multiple of it and the price can be read back from the stored limit (`quotedPriceOf`).
 */
const PRICE_GRAIN_E18 = BPS

/** USDC base units (6 decimals) of `amountE18` contracts at `priceE18`, rounded up: what a buy costs. */
export function costUsdcUp(amountE18: bigint, priceE18: bigint): bigint {
  const scale = E18 * 10n ** 12n
  return (amountE18 * priceE18 + scale - 1n) / scale
}

/** The buy-back limit for a quoted price: the price plus CLOSE_LIMIT_TOLERANCE_BPS (exact on the grain). */
export function closeLimitOf(priceE18: bigint): bigint {
  return (priceE18 * (BPS + BigInt(CLOSE_LIMIT_TOLERANCE_BPS))) / BPS
}

/** The quoted price behind a stored limit (the inverse of `closeLimitOf`, exact for prices on the grain). */
export function quotedPriceOf(limitE18: bigint): bigint {
  return (limitE18 * BPS) / (BPS + BigInt(CLOSE_LIMIT_TOLERANCE_BPS))
}

/**
 * Quotes buying `amountE18` contracts back: the best ask, or without one the mark plus
 * CLOSE_NO_ASK_MARGIN_BPS rounded up to the tick; undefined when the ticker has neither.
 *
 * @example buyBackQuote({ askE18: 12n * E18, markE18: 11n * E18, tickE18: E18 / 10n }, E18, now)
 *   // price 12, limit 12.24, cost 12 USDC
 */
export function buyBackQuote(t: TickerPrices, amountE18: bigint, at: Date): BuyBackQuote | undefined {
  if (amountE18 <= 0n) return undefined
  const raw =
    t.askE18 > 0n
      ? t.askE18
      : t.markE18 > 0n
        ? roundUpToTick((t.markE18 * (BPS + BigInt(CLOSE_NO_ASK_MARGIN_BPS))) / BPS, t.tickE18)
        : 0n
  if (raw <= 0n) return undefined
  const priceE18 = roundUpToTick(raw, PRICE_GRAIN_E18)
  return {
    priceE18,
    limitE18: closeLimitOf(priceE18),
    amountE18,
    cost: costUsdcUp(amountE18, priceE18),
    quotedAt: at,
  }
}
