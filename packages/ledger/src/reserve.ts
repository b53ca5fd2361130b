/**
 * The free balance and the reserves against it (spec 3.2, 8.1 ACTIVE_WITHDRAWAL_STATES; docs/ledger.md "The money path" step 10): free balance =
 * balance of `user:{u}:transit` minus the withdrawals in state 'requested' (the only ACTIVE
 * withdrawal state) minus the fundings of a subaccount still in flight. the contract names only the
 * first reserve; the second exists because a funding leaves for the exchange before its
 * `subaccount_funded` can be recorded (the key needs the exchange's transaction id), and money in
 * that window must not be withdrawable too. Both are summed by the SQL function ledger_reserved.
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
      - ledger_reserved(${userId}::uuid, ${currency}) as v`
  return toBigInt(row?.v)
}

export interface ReservedWithdrawal {
  readonly withdrawalId: string
  /** the free balance once this request is counted */
  readonly freeBalanceAfter: bigint
}

/**
 * Records a withdrawal request in state 'requested' if the free balance covers it, else throws
 * InsufficientFreeBalanceError (422) and writes nothing. One round trip, one INSERT with the
 * request's route, destination and Idempotency-Key (a key used before by the user raises Postgres'
 * unique violation, 23505); it locks the user's transit balance row, the lock an authorizing append
 * takes too, so the two cannot both spend the same free balance. The row is the withdrawals
 * module's (packages/withdrawals/src/request.ts): only it calls this in the service.
 *
 * @example
 *   const { withdrawalId } = await reserveWithdrawal(sql, { userId, currency: 'USDC', amount: 25_000_000n })
 */
export async function reserveWithdrawal(
  sql: Queryable,
  req: {
    userId: string
    currency: string
    amount: bigint
    withdrawalId?: string
    chain?: string
    destination?: string
    idempotencyKey?: string
  },
): Promise<ReservedWithdrawal> {
  if (req.amount <= 0n) throw new InvalidEventError('withdrawal', 'amount must be positive')
  const id = req.withdrawalId ?? uuidv7()
  const [row] = await sql<{ ok: boolean; free: string }[]>`
    select * from ledger_reserve_withdrawal(${id}::uuid, ${req.userId}::uuid, ${req.currency},
      ${userTransit(req.userId)}, ${req.amount.toString()}::numeric, ${req.chain ?? null}::text,
      ${req.destination ?? null}::text, ${req.idempotencyKey ?? null}::text)`
  if (!row?.ok)
    throw new InsufficientFreeBalanceError({
      userId: req.userId,
      currency: req.currency,
      freeBalance: toBigInt(row?.free),
      amount: req.amount,
    })
  return { withdrawalId: id, freeBalanceAfter: toBigInt(row.free) }
}

export interface ReservedFunding {
  readonly transferId: string
  /** the subaccounts row (one per user and asset, created here on first need) */
  readonly subaccountRowId: string
  readonly freeBalanceAfter: bigint
}

/**
 * Reserves `amount` of the free balance for funding the user's subaccount for `asset`: a
 * subaccount_transfers row in state 'reserved', which counts against the free balance until the
 * worker records `subaccount_funded` (it moves the row out of the in-flight states in the same
 * transaction as the append) or marks it failed. Throws InsufficientFreeBalanceError (422) and
 * writes nothing when the free balance does not cover it. Same lock as reserveWithdrawal.
 *
 * @example
 *   const { transferId } = await reserveFunding(sql, { userId, asset: 'ETH', currency: 'USDC', amount: 500_000_000n })
 */
export async function reserveFunding(
  sql: Queryable,
  req: { userId: string; asset: string; currency: string; amount: bigint; transferId?: string },
): Promise<ReservedFunding> {
  if (req.amount <= 0n) throw new InvalidEventError('subaccount_funded', 'amount must be positive')
  const id = req.transferId ?? uuidv7()
  const [row] = await sql<{ ok: boolean; free: string; subaccount: string | null }[]>`
    select * from ledger_reserve_funding(${id}::uuid, ${req.userId}::uuid, ${req.asset}, ${req.currency},
      ${userTransit(req.userId)}, ${req.amount.toString()}::numeric)`
  if (!row?.ok || !row.subaccount)
    throw new InsufficientFreeBalanceError({
      userId: req.userId,
      currency: req.currency,
      freeBalance: toBigInt(row?.free),
      amount: req.amount,
    })
  return { transferId: id, subaccountRowId: row.subaccount, freeBalanceAfter: toBigInt(row.free) }
}
