import { userSub, userTransit } from '../accounts'
import { move, type PostingRule } from './types'

/** The free balance moves into the subaccount at the exchange (docs/ledger.md "The money path" step 4); authorizing. */
export const subaccountFunded: PostingRule<'subaccount_funded'> = (p) =>
  move(userTransit(p.userId), userSub(p.userId, p.subaccountId, p.currency), p.currency, p.amount)
