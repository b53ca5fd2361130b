import { PLATFORM_EXPENSE_RECONCILIATION, userSub } from '../accounts'
import { move, type PostingRule } from './types'

/**
 * The subaccount's balance must mirror the exchange (spec 2.4), so the adjustment moves it by the
 * delta the exchange shows; the other leg is the platform's unexplained difference. The platform
 * owns the gap until someone explains it with a new event (a correction is never an UPDATE).
 */
export const reconciliationAdjustment: PostingRule<'reconciliation_adjustment'> = (p) =>
  move(PLATFORM_EXPENSE_RECONCILIATION, userSub(p.userId, p.subaccountId, p.currency), p.currency, p.delta)
