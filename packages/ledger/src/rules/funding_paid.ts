import { userIncome, userSub } from '../accounts'
import { move, type PostingRule } from './types'

/**
 * Funding for one bucket (docs/ledger.md "The money path" step 7), both ways against the user's funding income: received
 * (positive) adds to the subaccount, paid (negative) takes from it. Spec 2.4 has no funding expense,
 * so the income account carries the net and may turn positive (net paid).
 */
export const fundingPaid: PostingRule<'funding_paid'> = (p) =>
  move(userIncome(p.userId, 'funding'), userSub(p.userId, p.subaccountId, p.currency), p.currency, p.amount)
