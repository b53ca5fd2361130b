import { PLATFORM_EXPENSE_OVERHEAD, platformHot } from '../accounts'
import { InvalidEventError } from '../errors'
import { move, type PostingRule } from './types'

/**
 * Platform money changes chain (docs/ledger.md "The money path" step 3): it leaves the source hot wallet, arrives at the
 * destination one, and what the bridge kept is platform overhead: users' claims do not move.
 */
export const bridged: PostingRule<'bridged'> = (p) => {
  if (p.feeAmount > p.amount) throw new InvalidEventError('bridged', 'the bridge fee exceeds the amount')
  if (p.fromChain === p.toChain) throw new InvalidEventError('bridged', 'a bridge needs two different chains')
  return [
    ...move(platformHot(p.fromChain), platformHot(p.toChain), p.currency, p.amount - p.feeAmount),
    ...move(platformHot(p.fromChain), PLATFORM_EXPENSE_OVERHEAD, p.currency, p.feeAmount),
  ]
}
