/**
 * Conversion rounds, the pure part (docs/trading.md "Conversions"): which way a round goes, how
 * much it sells, when it is due, and the cost basis it leaves the wheel with. The rounds
 * (run.ts, the worker's convert tick runs them) do the moving; everything here is bigint.
 *
 * Derive's options settle in cash, so "assignment" does not deliver the underlying. A wheel that
 * sold a put which ends in the money buys the underlying itself, and one whose call ends in the
 * money sells it: the same holdings physical delivery would have left, bought or sold close to the
 * settlement price when the round starts PRE_CONVERT_LEAD_MINUTES before expiry.
 */
import { E18 } from '../placing'

export type ConversionDirection = 'to_underlying' | 'to_cash'
export type ConversionTrigger = 'pre_expiry' | 'after_settlement'

/** In the money at `indexE18`: a put below its strike, a call above it. At the strike: out. */
export function inTheMoney(side: 'put' | 'call', strikeE18: bigint, indexE18: bigint): boolean {
  return side === 'put' ? indexE18 < strikeE18 : indexE18 > strikeE18
}

/** Whether a leg expiring at `expirySec` is inside the pre-conversion lead at `nowMs` (and not expired). */
export function inPreConvertWindow(expirySec: number, nowMs: number, leadMinutes: number): boolean {
  const expiryMs = expirySec * 1000
  return nowMs < expiryMs && expiryMs - nowMs <= leadMinutes * 60_000
}

const USDC_TO_E18 = 10n ** 12n

/** USD in e18 → USDC base units (6 decimals), rounded down. */
export function usdcOfE18(usdE18: bigint): bigint {
  return usdE18 / USDC_TO_E18
}

/** e18 amount of the underlying → its base units (rounded down). */
export function unitsOfE18(amountE18: bigint, decimals: number): bigint {
  return (amountE18 * 10n ** BigInt(decimals)) / E18
}

export interface AmountInInput {
  readonly direction: ConversionDirection
  readonly trigger: ConversionTrigger
  /** the subaccount's journal balance of the currency sold, base units */
  readonly held: bigint
  /** what other live positions of the subaccount claim of that currency */
  readonly claimedByOthers: bigint
  /** the leg: strike, size sold (e18), and the index now (e18) */
  readonly strikeE18: bigint
  readonly sizeE18: bigint
  readonly indexE18: bigint
  /** MARGIN_BUFFER_USD in USDC base units: cash a round never sells */
  readonly bufferUsdc: bigint
}

/**
 * Base units of the sold currency a round sells; 0n when there is nothing to convert.
 *
 * - to the underlying: the cash the leg's size costs at the index (what delivery would have
 *   bought), never more than the unclaimed cash less the buffer and, before expiry, less the
 *   settlement the leg will still pay at this index, so the subaccount can pay it;
 * - to cash: all the unclaimed underlying.
 */
export function conversionAmountIn(i: AmountInInput): bigint {
  const free = i.held - i.claimedByOthers
  if (i.direction === 'to_cash') return free > 0n ? free : 0n
  const settlementAhead =
    i.trigger === 'pre_expiry' && i.strikeE18 > i.indexE18
      ? usdcOfE18(((i.strikeE18 - i.indexE18) * i.sizeE18) / E18) + 1n
      : 0n
  const spendable = free - settlementAhead - i.bufferUsdc
  const deliveryCost = usdcOfE18((i.sizeE18 * i.indexE18) / E18)
  const amount = spendable < deliveryCost ? spendable : deliveryCost
  return amount > 0n ? amount : 0n
}

/**
 * The cost basis (USD per unit, e18) a round to the underlying leaves: what the underlying cost
 * (cash sold plus the settlement paid, when known) per unit bought, and never below the put's
 * strike, what delivery would have charged. Rounded up: a call is never sold below cost.
 */
export function costBasisAfter(i: {
  readonly strikeE18: bigint
  /** USDC sold and settlement paid, base units */
  readonly usdcIn: bigint
  readonly settlementPaid: bigint
  /** base units of the underlying bought */
  readonly unitsOut: bigint
  readonly decimals: number
}): bigint {
  if (i.unitsOut <= 0n) return i.strikeE18
  const num = (i.usdcIn + i.settlementPaid) * USDC_TO_E18 * 10n ** BigInt(i.decimals)
  const effective = (num + i.unitsOut - 1n) / i.unitsOut
  return effective > i.strikeE18 ? effective : i.strikeE18
}

/**
 * The index as the swap ladder wants it (whole units of `buy` per whole unit of `sell`, an exact
 * ratio): `indexE18` is USD per unit of the underlying.
 */
export function swapIndexPrice(direction: ConversionDirection, indexE18: bigint): { num: bigint; den: bigint } {
  return direction === 'to_cash' ? { num: indexE18, den: E18 } : { num: E18, den: indexE18 }
}
