import { EXCHANGE_CHAIN, PLATFORM_EXPENSE_OVERHEAD, platformHot, userSub, userTransit } from '../accounts'
import { move, type PostingRule } from './types'

/**
 * The free balance moves into the subaccount at the exchange (docs/ledger.md "The money path" step 4); authorizing.
 * A creation fee is the platform's (docs/exchange-v3.md "Movements on v3"): what the exchange took (`feeAmount`)
 * leaves the platform's exchange funds for its overhead, as a bridge fee does (rules/bridged.ts); what was sent for
 * the fee but not taken (`feeExcess`) sits in the user's subaccount, so it moves there, at the platform's cost.
 */
export const subaccountFunded: PostingRule<'subaccount_funded'> = (p) => {
  const sub = userSub(p.userId, p.subaccountId, p.currency)
  return [
    ...move(userTransit(p.userId), sub, p.currency, p.amount),
    ...move(platformHot(EXCHANGE_CHAIN), PLATFORM_EXPENSE_OVERHEAD, p.currency, p.feeAmount ?? 0n),
    ...move(platformHot(EXCHANGE_CHAIN), sub, p.currency, p.feeExcess ?? 0n),
  ]
}
