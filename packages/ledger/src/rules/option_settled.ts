import { userExpense, userSub } from '../accounts'
import { move, type PostingRule } from './types'

/**
 * Expiry (docs/ledger.md "The money path" step 6). In the money the seller pays the settlement out of the subaccount, the
 * user's expense. Out of the money nothing moves: spec 6 rule 2, no postings.
 */
export const optionSettled: PostingRule<'option_settled'> = (p) =>
  p.outcome === 'otm'
    ? []
    : move(userSub(p.userId, p.subaccountId, p.currency), userExpense(p.userId, 'settlement'), p.currency, p.amount)
