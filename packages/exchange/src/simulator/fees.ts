/**
 * Derive's trading fees (help.derive.xyz "What are the fees?"): a rate on the notional
 * (index price × amount), plus a flat base fee per taker order; option fees capped at 12.5%
 * of the option's value. Defaults per instrument type:
 *   option: maker 0.03%, taker $0.50 + 0.04%;  perp: maker 0.01%, taker $0.10 + 0.06%.
 * The cap bounds the rate part; the base fee sits on top of it.
 */
import { minBig, mulE18 } from '../protocol/decimal'
import { DERIVE_FEE_SCHEDULE } from '../protocol/fee-schedule'
import type { SimInstrument } from './sim-types'

/** The schedule lives in protocol/fee-schedule.ts (the market-data routes publish the same one). */
export const FEE_SCHEDULE = DERIVE_FEE_SCHEDULE

/** The fee of one fill; `includeBase` once per taker order (the base fee is per order, not per fill). */
export function tradeFeeE18(
  inst: SimInstrument,
  role: 'maker' | 'taker',
  amountE18: bigint,
  indexE18: bigint,
  priceE18: bigint,
  includeBase: boolean,
): bigint {
  const rate = role === 'maker' ? inst.makerFeeRateE18 : inst.takerFeeRateE18
  let variable = mulE18(mulE18(indexE18, amountE18), rate)
  if (inst.feeCapRateE18 !== null) variable = minBig(variable, mulE18(mulE18(priceE18, amountE18), inst.feeCapRateE18))
  return variable + (role === 'taker' && includeBase ? inst.baseFeeE18 : 0n)
}
