import { userSub, userTransit } from '../accounts'
import { move, type PostingRule } from './types'

/** The subaccount's funds come back to transit and become free again (docs/ledger.md "The money path" step 9). */
export const subaccountReleased: PostingRule<'subaccount_released'> = (p) =>
  move(userSub(p.userId, p.subaccountId, p.currency), userTransit(p.userId), p.currency, p.amount)
