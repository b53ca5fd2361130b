/**
 * Derive's published trading fees (help.derive.xyz "What are the fees?"), in e18, in one place:
 * the simulator charges them and the market-data routes publish them (GET /:asset/fees).
 * A rate applies to the notional (index price × amount); a flat base fee is added once per
 * taker order; for options the rate part is capped at `capRate` × the option's value.
 *   option: maker 0.03 %, taker $0.50 + 0.04 %, rate part capped at 12.5 % of the option value
 *   perp:   maker 0.01 %, taker $0.10 + 0.06 %
 */
import { E18, minBig, mulE18 } from './decimal'

export interface FeeScheduleEntry {
  /** rate on the notional for a maker fill, e18 */
  readonly makerRate: bigint
  /** rate on the notional for a taker fill, e18 */
  readonly takerRate: bigint
  /** flat USD per taker order, e18 */
  readonly baseFee: bigint
  /** cap of the rate part as a share of the option's value (price × amount), e18; null when uncapped */
  readonly capRate: bigint | null
}

export const DERIVE_FEE_SCHEDULE: Readonly<Record<'option' | 'perp' | 'erc20', FeeScheduleEntry>> = Object.freeze({
  option: { makerRate: 3n * 10n ** 14n, takerRate: 4n * 10n ** 14n, baseFee: E18 / 2n, capRate: (E18 * 125n) / 1000n },
  perp: { makerRate: 10n ** 14n, takerRate: 6n * 10n ** 14n, baseFee: E18 / 10n, capRate: null },
  erc20: { makerRate: 10n ** 14n, takerRate: 6n * 10n ** 14n, baseFee: 0n, capRate: null },
})

/**
 * The fee of one fill, e18 USD: `rate` (maker or taker) on the notional, index × amount, capped at
 * `capRate` × the option's value, price × amount; plus the base fee when `includeBase` (once per
 * taker order, not per fill). The one formula: the simulator charges it, the market-data routes
 * and the quotes show it.
 */
export function tradeFeeE18(
  s: FeeScheduleEntry,
  role: 'maker' | 'taker',
  f: { amountE18: bigint; indexE18: bigint; priceE18: bigint },
  includeBase: boolean,
): bigint {
  let variable = mulE18(mulE18(f.indexE18, f.amountE18), role === 'maker' ? s.makerRate : s.takerRate)
  if (s.capRate !== null) variable = minBig(variable, mulE18(mulE18(f.priceE18, f.amountE18), s.capRate))
  return variable + (role === 'taker' && includeBase ? s.baseFee : 0n)
}

/**
 * The least `max_fee` (per unit, e18 USD) Derive takes on an order: 2 × the taker rate × max(index,
 * limit price) + the base fee (derive-ts 3.0.13 `src/api/orders.ts`: "The exchange bounds the per-unit
 * fee at 2 x taker_fee_rate x max(index, limit) + base_fee, where index is the underlying SPOT feed");
 * below it the order is refused with 11023 "Max fee order param is too low". The rates are the
 * instrument's (`taker_fee_rate`, `base_fee` of `public/get_instrument`).
 */
export function orderMaxFeeFloorE18(
  rates: { takerRateE18: bigint; baseFeeE18: bigint },
  indexE18: bigint,
  limitPriceE18: bigint,
): bigint {
  const basis = indexE18 > limitPriceE18 ? indexE18 : limitPriceE18
  return 2n * mulE18(rates.takerRateE18, basis) + rates.baseFeeE18
}
