import { userExternal, userTransit } from '../accounts'
import { move, type PostingRule } from './types'

/** The user's claim enters from the system boundary into transit, where it is free (docs/ledger.md "The money path" step 1). */
export const depositDetected: PostingRule<'deposit_detected'> = (p) =>
  move(userExternal(p.userId), userTransit(p.userId), p.currency, p.amount)
