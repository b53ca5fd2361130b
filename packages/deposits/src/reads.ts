/**
 * A user's deposits as they read them (GET /deposits; docs/chains.md "A deposit's progress"): each
 * transfer the watch recorded to their address, newest first, with the state of its sweep. Reads
 * only; the rows are written by transitions.ts.
 */
import type { Queryable } from '@wh/db'

export interface UserDeposit {
  id: string
  chain: string
  token: string
  /** base units, decimal */
  amount: string
  txHash: string
  /** decimal */
  blockNumber: string
  /** detected → sweeping → swept; failed / retry while an operator retries the sweep */
  state: string
  /** when the watch recorded it: already `confirmations` deep, and credited in the same transaction */
  createdAt: Date
  updatedAt: Date
  /** created_at as Postgres prints it (microseconds), for a cursor */
  createdAtText: string
}

/** At most `limit` of `userId`'s deposits, newest first, after the cursor row `before` when given. */
export async function userDeposits(
  sql: Queryable,
  userId: string,
  q: { limit: number; before?: { createdAt: string; id: string } },
): Promise<UserDeposit[]> {
  return sql<UserDeposit[]>`
    select id, chain, token, amount::text as amount, tx_hash as "txHash", block_number::text as "blockNumber",
      state, created_at as "createdAt", updated_at as "updatedAt", created_at::text as "createdAtText"
    from deposits
    where user_id = ${userId}
      ${q.before ? sql`and (created_at, id) < (${q.before.createdAt}::timestamptz, ${q.before.id}::uuid)` : sql``}
    order by created_at desc, id desc
    limit ${q.limit}`
}
