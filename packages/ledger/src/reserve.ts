/**
 * The free balance and the withdrawal reserve (spec 3.2, 8.1 ACTIVE; DESIGN): free balance =
 * balance of `user:{u}:transit` minus the withdrawals in state 'requested', the only ACTIVE state.
 */
import { userTransit } from './accounts'
import { InsufficientFreeBalanceError, InvalidEventError } from './errors'
import { type Queryable, toBigInt } from './sql'
import { uuidv7 } from './uuidv7'

/** The user's free balance in one currency, in base units. */
export async function freeBalance(sql: Queryable, userId: string, currency: string): Promise<bigint> {
  const [row] = await sql<{ v: string }[]>`
    select
      (select coalesce(sum(balance), 0) from ledger_balances where account = ${userTransit(userId)} and currency = ${currency})
      - (select coalesce(sum(amount), 0) from withdrawals
         where user_id = ${userId} and currency = ${currency} and state = 'requested') as v`
  return toBigInt(row?.v)
}

export interface ReservedWithdrawal {
  readonly withdrawalId: string
  /** the free balance once this request is counted */
  readonly freeBalanceAfter: bigint
}

/**
 * Records a withdrawal request in state 'requested' if the free balance covers it, else throws
 * InsufficientFreeBalanceError (422) and writes nothing. One round trip; it locks the user's
 * transit balance row, the lock an authorizing append takes too, so the two cannot both spend the
 * same free balance.
 *
 * @example
 *   const { withdrawalId } = await reserveWithdrawal(sql, { userId, currency: 'USDC', amount: 25_000_000n })
 */
export async function reserveWithdrawal(
  sql: Queryable,
  req: { userId: string; currency: string; amount: bigint; withdrawalId?: string },
): Promise<ReservedWithdrawal> {
  if (req.amount <= 0n) throw new InvalidEventError('withdrawal', 'amount must be positive')
  const id = req.withdrawalId ?? uuidv7()
  const [row] = await sql<{ ok: boolean; free: string }[]>`
    select * from ledger_reserve_withdrawal(${id}::uuid, ${req.userId}::uuid, ${req.currency},
      ${userTransit(req.userId)}, ${req.amount.toString()}::numeric)`
  if (!row?.ok)
    throw new InsufficientFreeBalanceError({
      userId: req.userId,
      currency: req.currency,
      freeBalance: toBigInt(row?.free),
      amount: req.amount,
    })
  return { withdrawalId: id, freeBalanceAfter: toBigInt(row.free) }
}
