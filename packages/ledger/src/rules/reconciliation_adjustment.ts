import { type AccountName, EXCHANGE_CHAIN, PLATFORM_EXPENSE_RECONCILIATION, platformHot, userSub } from '../accounts'
import type { Payloads } from '../payloads'
import { move, type PostingRule } from './types'

/**
 * The account a reconciliation adjustment moves: the user's subaccount, or, without a user, the platform's exchange
 * funds (`platform:hot:derive`), which the platform's funding subaccount on Derive v3 holds.
 */
export function adjustedAccount(p: Payloads['reconciliation_adjustment']): AccountName {
  return p.userId === undefined ? platformHot(EXCHANGE_CHAIN) : userSub(p.userId, p.subaccountId, p.currency)
}

/**
 * The subaccount's balance must mirror the exchange (spec 2.4), so the adjustment moves it by the
 * delta the exchange shows; the other leg is the platform's unexplained difference. The platform
 * owns the gap until someone explains it with a new event (a correction is never an UPDATE).
 */
export const reconciliationAdjustment: PostingRule<'reconciliation_adjustment'> = (p) =>
  move(PLATFORM_EXPENSE_RECONCILIATION, adjustedAccount(p), p.currency, p.delta)
