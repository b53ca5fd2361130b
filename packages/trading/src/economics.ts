/**
 * Honest economics of a leg and a wheel (docs/trading.md "Economics"): what selling the strike the
 * placing tick would choose now yields after the exchange's and the platform's fees, the smallest
 * size at which the fees stay within a share of the premium, and each cycle's net result against
 * holding the underlying. Pure functions over bigints: prices and amounts e18, money in USDC base
 * units (6 decimals), shares in basis points. Fees round up and premiums down, as the fills do.
 */
import { type FeeScheduleEntry, tradeFeeE18 } from '@wh/exchange'
import {
  annualisedYieldBps,
  chooseExpiry,
  chooseStrike,
  E18,
  type OptionQuote,
  platformFee,
  premiumUsdc,
  sizeFor,
} from './placing'
import type { TradingProfile } from './profiles'

const BPS = 10_000n
const USDC_SCALE = 10n ** 12n
const YEAR_MS = 365n * 86_400_000n

/** An exchange's option fee schedule in e18 (an instrument's own, or Derive's DERIVE_FEE_SCHEDULE.option). */
export type OptionFeeSchedule = FeeScheduleEntry

const maxBig = (a: bigint, b: bigint) => (a > b ? a : b)

/** e18 USD → USDC base units, rounded up (a fee is never understated). */
const usdcUp = (e18: bigint) => (e18 + USDC_SCALE - 1n) / USDC_SCALE

/**
 * The exchange's fee of selling `sizeE18` contracts at `priceE18` with the index at `indexE18`:
 * maker (resting post-only orders, no base fee) and taker (the end-of-window cross: the base fee
 * once per order plus the taker rate), the rate part capped at `capRate` × the option's value.
 */
export function exchangeFees(
  s: OptionFeeSchedule,
  sizeE18: bigint,
  priceE18: bigint,
  indexE18: bigint,
): { maker: bigint; taker: bigint } {
  const fill = { amountE18: sizeE18, indexE18, priceE18 }
  return { maker: usdcUp(tradeFeeE18(s, 'maker', fill, false)), taker: usdcUp(tradeFeeE18(s, 'taker', fill, true)) }
}

/** `part` as a share of `whole` in basis points, rounded up; null when there is no whole. */
export function shareBps(part: bigint, whole: bigint): bigint | null {
  if (whole <= 0n) return null
  return (part * BPS + whole - 1n) / whole
}

export interface LegEconomicsInput {
  readonly side: 'put' | 'call'
  /** the option the tick would sell, its amount step and minimum (e18), and the index (e18) */
  readonly pick: OptionQuote
  readonly amountStepE18: bigint
  readonly minimumAmountE18: bigint
  readonly indexE18: bigint
  /** collateral in its own base units (USDC for a put, the underlying for a call) */
  readonly collateral: bigint
  readonly collateralDecimals: number
  readonly nowMs: number
  readonly profile: TradingProfile
  /** the profile's minimum size on this asset, e18 */
  readonly profileMinE18: bigint
  readonly platformFeeRate: string
  readonly fees: OptionFeeSchedule
  readonly maxFeeShareBps: number
}

export interface LegEconomics {
  readonly instrument: string
  readonly strikeE18: bigint
  readonly expirySec: number
  readonly markE18: bigint
  readonly indexE18: bigint
  readonly sizeE18: bigint
  readonly minimumSizeE18: bigint
  /** USDC base units */
  readonly premium: bigint
  readonly exchangeFeeMaker: bigint
  /** null when the profile never crosses (`endOfWindow: cancel`): no taker fill, no base fee */
  readonly exchangeFeeTaker: bigint | null
  /** the most the exchange can charge under the profile: taker when it may cross, else maker */
  readonly exchangeFee: bigint
  readonly platformFee: bigint
  /** premium − exchangeFee − platformFee (the worst case under the profile) */
  readonly netPremium: bigint
  readonly exchangeFeeShareBps: bigint | null
  readonly platformFeeShareBps: bigint | null
  readonly feeShareBps: bigint | null
  /** gross premium over the collateral per contract, a year (what the tick checks) */
  readonly annualisedYieldBps: bigint
  /** net premium over the collateral the size ties up, a year */
  readonly netAnnualisedYieldBps: bigint
  /** why the tick would not place it now (size below the minimum, yield below the profile's); null: it would */
  readonly blocker: string | null
  readonly exceedsFeeShare: boolean
}

/**
 * The economics of selling `pick` with this collateral now: the size the tick would sell, its
 * premium at the mark, the fees, the net and the yields, and whether fees exceed `maxFeeShareBps`.
 */
export function legEconomics(i: LegEconomicsInput): LegEconomics {
  const { pick, profile } = i
  const sizeE18 = sizeFor(i.side, i.collateral, i.collateralDecimals, pick.strikeE18, i.amountStepE18)
  const minimumSizeE18 = maxBig(i.minimumAmountE18, i.profileMinE18)
  const premium = premiumUsdc(sizeE18, pick.markE18)
  const ex = exchangeFees(i.fees, sizeE18, pick.markE18, i.indexE18)
  const crosses = profile.endOfWindow === 'cross'
  const exchangeFee = crosses ? ex.taker : ex.maker
  const pf = platformFee(premium, i.platformFeeRate)
  const feeShareBps = shareBps(exchangeFee + pf, premium)
  const tenorMs = pick.expirySec * 1000 - i.nowMs
  const perContract = i.side === 'put' ? pick.strikeE18 : i.indexE18
  const yieldBps = annualisedYieldBps(pick.markE18, perContract, tenorMs)
  const net = premium - exchangeFee - pf
  const collateralE18 = (perContract * sizeE18) / E18
  const netYield =
    collateralE18 > 0n && tenorMs > 0
      ? (net * USDC_SCALE * BPS * YEAR_MS) / (collateralE18 * BigInt(Math.round(tenorMs)))
      : 0n
  const blocker =
    sizeE18 < minimumSizeE18 || sizeE18 === 0n
      ? 'the collateral secures fewer contracts than the minimum size'
      : yieldBps < BigInt(profile.minAnnualisedYieldBps)
        ? `the premium yields ${yieldBps} bps a year, below the profile minimum ${profile.minAnnualisedYieldBps}`
        : null
  return {
    instrument: pick.instrument,
    strikeE18: pick.strikeE18,
    expirySec: pick.expirySec,
    markE18: pick.markE18,
    indexE18: i.indexE18,
    sizeE18,
    minimumSizeE18,
    premium,
    exchangeFeeMaker: ex.maker,
    exchangeFeeTaker: crosses ? ex.taker : null,
    exchangeFee,
    platformFee: pf,
    netPremium: net,
    exchangeFeeShareBps: shareBps(exchangeFee, premium),
    platformFeeShareBps: shareBps(pf, premium),
    feeShareBps,
    annualisedYieldBps: yieldBps,
    netAnnualisedYieldBps: netYield,
    blocker,
    exceedsFeeShare: feeShareBps === null || feeShareBps > BigInt(i.maxFeeShareBps),
  }
}

/** One listed option with its ticker, as the API reads them from the exchange's public endpoints. */
export interface ChainOption {
  readonly quote: OptionQuote
  readonly amountStepE18: bigint
  readonly minimumAmountE18: bigint
  readonly indexE18: bigint
  /** the instrument's own fee rates as the exchange publishes them */
  readonly fees: OptionFeeSchedule
}

/**
 * The placing tick's choice (docs/trading.md "Placing" 1) over a read option chain: the nearest
 * expiry in the tenor window, then the strike nearest the target delta. Undefined with the reason
 * the tick would wait for.
 */
export function chooseFromChain(
  chain: readonly ChainOption[],
  side: 'put' | 'call',
  nowMs: number,
  profile: TradingProfile,
): { option: ChainOption } | { reason: string } {
  const expiry = chooseExpiry(
    chain.map((c) => c.quote.expirySec),
    nowMs,
    profile,
  )
  if (expiry === undefined) return { reason: 'no expiry inside the profile tenor window' }
  const type = side === 'put' ? 'P' : 'C'
  const candidates = chain.filter((c) => c.quote.expirySec === expiry && c.quote.type === type)
  const pick = chooseStrike(
    candidates.map((c) => c.quote),
    side,
    profile,
  )
  const option = pick && candidates.find((c) => c.quote.instrument === pick.instrument)
  return option ? { option } : { reason: 'no strike near the target delta' }
}

/**
 * The smallest size (e18, on the amount step, never below the minimums) at which the fees of
 * selling `option` stay within `maxFeeShareBps` of the premium. The platform's and the rate parts
 * of the fees are proportional to the size, so only the taker base fee (a profile that crosses)
 * makes small sizes worse: size ≥ base / (mark × (share − platform rate − rate part share)).
 * Null when no size qualifies at these marks (the proportional parts alone exceed the share).
 */
export function minimumSensibleSize(
  option: ChainOption,
  side: 'put' | 'call',
  o: {
    profile: TradingProfile
    profileMinE18: bigint
    platformFeeRate: string
    maxFeeShareBps: number
    nowMs: number
  },
): bigint | null {
  const fees = option.fees
  const step = option.amountStepE18 > 0n ? option.amountStepE18 : 1n
  const roundUp = (x: bigint) => ((x + step - 1n) / step) * step
  const minimum = roundUp(maxBig(option.minimumAmountE18, o.profileMinE18))
  const mark = option.quote.markE18
  if (mark <= 0n) return null
  const crosses = o.profile.endOfWindow === 'cross'
  const rate = crosses ? fees.takerRate : fees.makerRate
  let rateShare = (option.indexE18 * rate) / mark
  if (fees.capRate !== null && fees.capRate < rateShare) rateShare = fees.capRate
  const platformShare = platformFee(E18, o.platformFeeRate)
  const room = (BigInt(o.maxFeeShareBps) * E18) / BPS - platformShare - rateShare
  if (room <= 0n) return null
  const base = crosses ? fees.baseFee : 0n
  let size = roundUp((base * E18 * E18) / (mark * room))
  if (size < minimum) size = minimum
  // the unit roundings of premium and fees can cost a few more steps; check with the leg's own figures
  for (let k = 0; k < 1000; k++) {
    if (fitsShare(option, side, size, o)) return size
    size += step
  }
  return null
}

function fitsShare(
  option: ChainOption,
  side: 'put' | 'call',
  sizeE18: bigint,
  o: Parameters<typeof minimumSensibleSize>[2],
): boolean {
  const e = legEconomics({
    side,
    pick: option.quote,
    amountStepE18: 0n,
    minimumAmountE18: 0n,
    indexE18: option.indexE18,
    // the collateral that secures exactly `sizeE18` (e18 units, so sizeFor gives it back)
    collateral: side === 'put' ? (sizeE18 * option.quote.strikeE18 + E18 - 1n) / E18 : sizeE18,
    collateralDecimals: 18,
    nowMs: o.nowMs,
    profile: o.profile,
    profileMinE18: 0n,
    platformFeeRate: o.platformFeeRate,
    fees: option.fees,
    maxFeeShareBps: o.maxFeeShareBps,
  })
  return e.sizeE18 >= sizeE18 && !e.exceedsFeeShare
}

/** The collateral (its own base units) that `sizeE18` contracts of a side need: strike × size USDC, or size. */
export function collateralFor(side: 'put' | 'call', sizeE18: bigint, strikeE18: bigint, decimals: number): bigint {
  const scale = 10n ** BigInt(18 - decimals)
  const e18 = side === 'put' ? (sizeE18 * strikeE18) / E18 : sizeE18
  return (e18 + scale - 1n) / scale
}

/** A wheel's leg as recorded: sums of its fills (USDC base units) and what expiry or a buy-back cost. */
export interface CycleFigures {
  readonly premium: bigint
  readonly exchangeFee: bigint
  readonly platformFee: bigint
  /** paid at an in-the-money expiry */
  readonly settlementCost: bigint
  /** paid buying the leg back */
  readonly closeCost: bigint
}

/** A cycle's net result: premium − exchange fee − platform fee − settlement cost − buy-back cost. */
export function cycleNet(c: CycleFigures): bigint {
  return c.premium - c.exchangeFee - c.platformFee - c.settlementCost - c.closeCost
}

/** Running sums of the cycles' nets, oldest first: a losing cycle takes from the sum. */
export function cumulativeNets(cyclesOldestFirst: readonly CycleFigures[]): bigint[] {
  let sum = 0n
  return cyclesOldestFirst.map((c) => {
    sum += cycleNet(c)
    return sum
  })
}

export interface WheelVersusHold {
  /** cumulative net / starting amount, basis points (rounded toward zero) */
  readonly wheelReturnBps: bigint | null
  /** what the starting amount held in the underlying from the start price is worth now, USDC base units */
  readonly holdValue: bigint | null
  /** holdValue / starting amount − 1, basis points */
  readonly holdReturnBps: bigint | null
}

/**
 * The wheel's realised return against holding: the starting USDC bought the underlying at the
 * index of the wheel's start, valued at the index now. Null parts without a price.
 */
export function wheelVersusHold(
  startAmount: bigint,
  cumulativeNet: bigint,
  startIndexE18: bigint | null,
  nowIndexE18: bigint | null,
): WheelVersusHold {
  if (startAmount <= 0n) return { wheelReturnBps: null, holdValue: null, holdReturnBps: null }
  const wheelReturnBps = (cumulativeNet * BPS) / startAmount
  if (startIndexE18 === null || nowIndexE18 === null || startIndexE18 <= 0n)
    return { wheelReturnBps, holdValue: null, holdReturnBps: null }
  const holdValue = (startAmount * nowIndexE18) / startIndexE18
  return { wheelReturnBps, holdValue, holdReturnBps: ((holdValue - startAmount) * BPS) / startAmount }
}
