import { PLATFORM_EQUITY, platformGas, platformHot } from '../accounts'
import { move, type PostingRule } from './types'

const holdingOf = (p: { holding: 'hot' | 'gas'; chain: string }) =>
  p.holding === 'gas' ? platformGas(p.chain) : platformHot(p.chain)

/**
 * The operator brings the platform's own money in (docs/ledger.md "Platform capital"): from the
 * platform's equity into the holding where it arrived. No user's claim moves; without it the
 * holding would show money the journal cannot explain (the funding subaccount's opening deposit).
 */
export const capitalContributed: PostingRule<'capital_contributed'> = (p) =>
  move(PLATFORM_EQUITY, holdingOf(p), p.currency, p.amount)

/** The operator takes the platform's own money out: from the holding back to the platform's equity. */
export const capitalWithdrawn: PostingRule<'capital_withdrawn'> = (p) =>
  move(holdingOf(p), PLATFORM_EQUITY, p.currency, p.amount)
