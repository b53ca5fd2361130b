import { PLATFORM_FEE_REVENUE, userExpense, userIncome, userSub } from '../accounts'
import { move, type PostingRule } from './types'

/**
 * One fill (docs/ledger.md "The money path" step 5).
 * - A sale: the premium is the user's income and lands in the subaccount; the exchange fee is the
 *   user's expense; the platform fee is the platform's revenue. Both fees are paid out of the
 *   subaccount, so the user bears them.
 * - A buy-back (`side: 'buy'`): the premium paid leaves the subaccount as the user's settlement
 *   expense (closing the short early settles it at the buy price instead of at expiry), and the
 *   exchange fee is the user's expense. No platform fee.
 */
export const optionSold: PostingRule<'option_sold'> = (p) => {
  const sub = userSub(p.userId, p.subaccountId, p.currency)
  if (p.side === 'buy')
    return [
      ...move(sub, userExpense(p.userId, 'settlement'), p.currency, p.premium),
      ...move(sub, userExpense(p.userId, 'exchange_fee'), p.currency, p.exchangeFee),
    ]
  return [
    ...move(userIncome(p.userId, 'premium'), sub, p.currency, p.premium),
    ...move(sub, userExpense(p.userId, 'exchange_fee'), p.currency, p.exchangeFee),
    ...move(sub, PLATFORM_FEE_REVENUE, p.currency, p.platformFee),
  ]
}
