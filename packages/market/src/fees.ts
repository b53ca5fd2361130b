/**
 * What a sale of options costs, in bigint e18 (no float near an amount): the exchange's fee per
 * Derive's schedule (one copy, in @wh/exchange protocol/fee-schedule.ts) and the platform fee,
 * PLATFORM_FEE_RATE × the premium of each option sold (booked as PLATFORM_FEE_REVENUE in the
 * `option_sold` event, docs/ledger.md).
 */
import { toBaseUnits } from '@wh/core'
import { DERIVE_FEE_SCHEDULE, E18, fromE18, mulE18, tradeFeeE18 } from '@wh/exchange'

export interface OptionSaleFees {
  /** premium × amount */
  readonly grossPremiumE18: bigint
  /** maker: min(makerRate × index × amount, capRate × premium × amount) */
  readonly exchangeFeeMakerE18: bigint
  /** taker: baseFee + min(takerRate × index × amount, capRate × premium × amount) */
  readonly exchangeFeeTakerE18: bigint
  /** platformFeeRate × gross premium */
  readonly platformFeeE18: bigint
  /** gross premium − maker exchange fee − platform fee (orders rest as maker first) */
  readonly netPremiumMakerE18: bigint
}

/**
 * Fees of selling `amountE18` options at `premiumE18` each with the index at `indexE18`.
 * @example optionSaleFees({ indexE18: 3000n * E18, premiumE18: 50n * E18, amountE18: E18, platformFeeRate: '0.1' })
 *   // maker fee 0.9, taker fee 1.7, platform fee 5, net 44.1
 */
export function optionSaleFees(p: {
  indexE18: bigint
  premiumE18: bigint
  amountE18: bigint
  platformFeeRate: string
}): OptionSaleFees {
  const s = DERIVE_FEE_SCHEDULE.option
  const fill = { amountE18: p.amountE18, indexE18: p.indexE18, priceE18: p.premiumE18 }
  const grossPremiumE18 = mulE18(p.premiumE18, p.amountE18)
  const exchangeFeeMakerE18 = tradeFeeE18(s, 'maker', fill, false)
  const exchangeFeeTakerE18 = tradeFeeE18(s, 'taker', fill, true)
  const platformFeeE18 = mulE18(grossPremiumE18, toBaseUnits(p.platformFeeRate, 18, 'down'))
  return {
    grossPremiumE18,
    exchangeFeeMakerE18,
    exchangeFeeTakerE18,
    platformFeeE18,
    netPremiumMakerE18: grossPremiumE18 - exchangeFeeMakerE18 - platformFeeE18,
  }
}

/** The option fee schedule as decimal strings (rates as fractions: 0.0003 = 0.03 %). */
export function optionFeeSchedule() {
  const s = DERIVE_FEE_SCHEDULE.option
  return {
    makerRate: fromE18(s.makerRate),
    takerRate: fromE18(s.takerRate),
    baseFeeUsd: fromE18(s.baseFee),
    capRateOfOptionValue: s.capRate === null ? null : fromE18(s.capRate),
  }
}

export { E18 }
