import { PLATFORM_EXPENSE_OVERHEAD, platformExpenseGas, platformGas } from '../accounts'
import { move, type PostingRule } from './types'

/**
 * Native gas burnt (docs/ledger.md "The money path" steps 2 and 8): out of the platform's gas holdings on that chain. The
 * platform bears it either way; with a user it is booked as gas attributed to that user but not
 * charged (`platform:expense:gas:{chain}`), without one as overhead.
 */
export const gasSpent: PostingRule<'gas_spent'> = (p) =>
  move(
    platformGas(p.chain),
    p.userId === undefined ? PLATFORM_EXPENSE_OVERHEAD : platformExpenseGas(p.chain),
    p.currency,
    p.amount,
  )
