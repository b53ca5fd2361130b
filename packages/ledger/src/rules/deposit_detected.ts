import { userExternal, userTransit } from '../accounts'
import { move, type PostingRule } from './types'

/** The user's claim enters from the system boundary into transit, where it is free (DESIGN step 1). */
export const depositDetected: PostingRule<'deposit_detected'> = (p) =>
  move(userExternal(p.userId), userTransit(p.userId), p.currency, p.amount)
