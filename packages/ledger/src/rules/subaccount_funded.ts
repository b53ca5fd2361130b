import { EXCHANGE_CHAIN, PLATFORM_EXPENSE_OVERHEAD, platformHot, userSub, userTransit } from '../accounts'
import { move, type PostingRule } from './types'

/**
 * The free balance moves into the subaccount at the exchange (docs/ledger.md "The money path" step 4); authorizing.
 * A creation fee the exchange took (`feeAmount`, docs/exchange-v3.md "Movements on v3") is the platform's: it leaves
 * the platform's exchange funds for its overhead, as a bridge fee does (rules/bridged.ts); the user's amount is whole.
 */
export const subaccountFunded: PostingRule<'subaccount_funded'> = (p) => [
  ...move(userTransit(p.userId), userSub(p.userId, p.subaccountId, p.currency), p.currency, p.amount),
  ...move(platformHot(EXCHANGE_CHAIN), PLATFORM_EXPENSE_OVERHEAD, p.currency, p.feeAmount ?? 0n),
]
