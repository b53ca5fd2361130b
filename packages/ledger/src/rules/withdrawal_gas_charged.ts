import { PLATFORM_FEE_REVENUE, userTransit } from '../accounts'
import { move, type PostingRule } from './types'

/**
 * The gas of a withdrawal that failed on chain, charged to its user (docs/ledger.md "Posting
 * rules"; docs/hostile-world.md "The user's failures are the user's"): the user's transit pays the
 * platform back what the failed transaction burnt. The burnt gas itself stays a `gas_spent` of the
 * same transaction (out of `platform:gas`, into `platform:expense:gas`), so the two together leave
 * the platform whole and the user's claim lower by the gas: the chain's hot wallet lost the gas,
 * and the journal's liabilities fell by as much. Recorded in the commit that releases the reserve,
 * capped at the withdrawal's amount, so the free balance never goes negative.
 */
export const withdrawalGasCharged: PostingRule<'withdrawal_gas_charged'> = (p) =>
  move(userTransit(p.userId), PLATFORM_FEE_REVENUE, p.currency, p.amount)
