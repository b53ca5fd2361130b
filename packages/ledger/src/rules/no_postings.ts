import type { PostingRule } from './types'

/**
 * spec 6 rule 2: no postings for `deposit_swept` (the funds move between addresses the platform
 * controls; the user's claim already sits in transit), `swap_reverted` (nothing was exchanged; its
 * gas is a `gas_spent`) and `trade_rejected` (no fill).
 */
export const depositSwept: PostingRule<'deposit_swept'> = () => []
export const swapReverted: PostingRule<'swap_reverted'> = () => []
export const tradeRejected: PostingRule<'trade_rejected'> = () => []

/** Control events: they change what the system does next, not who holds what. */
export const signalReceived: PostingRule<'signal_received'> = () => []
export const stopRaised: PostingRule<'stop_raised'> = () => []
export const stopCleared: PostingRule<'stop_cleared'> = () => []
