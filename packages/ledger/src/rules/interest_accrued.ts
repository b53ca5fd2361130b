import { userExpense, userIncome, userSub } from '../accounts'
import { move, type PostingRule } from './types'

/**
 * Interest on what sits at the exchange (docs/ledger.md "The money path" step 7). Earned: the user's interest income into
 * the subaccount. Charged (negative, a borrow): out of the subaccount into the user's borrow expense.
 */
export const interestAccrued: PostingRule<'interest_accrued'> = (p) => {
  const sub = userSub(p.userId, p.subaccountId, p.currency)
  return p.amount >= 0n
    ? move(userIncome(p.userId, 'interest'), sub, p.currency, p.amount)
    : move(sub, userExpense(p.userId, 'borrow'), p.currency, -p.amount)
}
