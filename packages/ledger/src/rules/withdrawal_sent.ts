import { userExternal, userTransit } from '../accounts'
import { move, type PostingRule } from './types'

/**
 * The send of a withdrawal (docs/ledger.md "The money path" step 10): the claim leaves transit through the system boundary.
 * A recording event: the transaction is on chain, so it always posts; the reserve was checked when
 * the withdrawal was requested (reserveWithdrawal). Gas is a separate `gas_spent` at slot 1.
 */
export const withdrawalSent: PostingRule<'withdrawal_sent'> = (p) =>
  move(userTransit(p.userId), userExternal(p.userId), p.currency, p.amount)
