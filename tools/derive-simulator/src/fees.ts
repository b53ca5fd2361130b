/**
 * Derive's trading fees (help.derive.xyz "What are the fees?"): a rate on the notional
 * (index price × amount), plus a flat base fee per taker order; option fees capped at 12.5%
 * of the option's value. Defaults per instrument type:
 *   option: maker 0.03%, taker $0.50 + 0.04%;  perp: maker 0.01%, taker $0.10 + 0.06%.
 * The cap bounds the rate part; the base fee sits on top of it.
 */
import { DERIVE_FEE_SCHEDULE, tradeFeeE18 as scheduleFeeE18 } from '@wh/exchange'
import type { SimInstrument } from './sim-types'

/** The schedule lives in @wh/exchange (packages/exchange/src/protocol/fee-schedule.ts) (the market-data routes publish the same one). */
export const FEE_SCHEDULE = DERIVE_FEE_SCHEDULE

/** The fee of one fill at an instrument's own rates; `includeBase` once per taker order (the base fee is per order, not per fill). */
export function tradeFeeE18(
  inst: SimInstrument,
  role: 'maker' | 'taker',
  amountE18: bigint,
  indexE18: bigint,
  priceE18: bigint,
  includeBase: boolean,
): bigint {
  const schedule = {
    makerRate: inst.makerFeeRateE18,
    takerRate: inst.takerFeeRateE18,
    baseFee: inst.baseFeeE18,
    capRate: inst.feeCapRateE18,
  }
  return scheduleFeeE18(schedule, role, { amountE18, indexE18, priceE18 }, includeBase)
}
