import { EXCHANGE_CHAIN, PLATFORM_EXPENSE_OVERHEAD, platformHot, userExpense, userIncome, userSub } from '../accounts'
import { move, type PostingRule } from './types'

/**
 * Interest on what sits at the exchange (docs/ledger.md "The money path" step 7). A user's subaccount: earned, the
 * user's interest income into the subaccount; charged (negative, a borrow), out of the subaccount into the user's
 * borrow expense. The platform's funding subaccount (no `userId`, Derive v3): the platform's exchange funds
 * (`platform:hot:derive`) gain what it earned from `platform:expense:overhead`, income that offsets overhead, as spec
 * 2.4 has no platform income account; a charge goes the other way.
 */
export const interestAccrued: PostingRule<'interest_accrued'> = (p) => {
  if (p.userId === undefined) return move(PLATFORM_EXPENSE_OVERHEAD, platformHot(EXCHANGE_CHAIN), p.currency, p.amount)
  const sub = userSub(p.userId, p.subaccountId, p.currency)
  return p.amount >= 0n
    ? move(userIncome(p.userId, 'interest'), sub, p.currency, p.amount)
    : move(sub, userExpense(p.userId, 'borrow'), p.currency, -p.amount)
}
