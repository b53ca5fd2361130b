import { userExpense, userSub } from '../accounts'
import { InvalidEventError } from '../errors'
import { move, type PostingRule } from './types'

/**
 * A conversion in a subaccount (docs/ledger.md "The money path" step 8). Two currencies cannot balance against each other,
 * so `user:{u}:expense:swap` is the conversion account: it takes what was sold and gives what was
 * bought, each leg zero-sum in its own currency. Valued at prices, its balance is the cost of the
 * swaps (slippage and fees), borne by the user. Gas is a separate `gas_spent` at slot 1.
 */
export const swapExecuted: PostingRule<'swap_executed'> = (p) => {
  if (p.sellCurrency === p.buyCurrency) throw new InvalidEventError('swap_executed', 'a swap needs two currencies')
  const swap = userExpense(p.userId, 'swap')
  return [
    ...move(userSub(p.userId, p.subaccountId, p.sellCurrency), swap, p.sellCurrency, p.sellAmount),
    ...move(swap, userSub(p.userId, p.subaccountId, p.buyCurrency), p.buyCurrency, p.buyAmount),
  ]
}
