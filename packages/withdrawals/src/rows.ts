/**
 * The withdrawals row as one type, `WithdrawalRow` (drizzle's inferred type of the table in
 * packages/db/src/schema/withdrawals.ts), and the reads the API answers with. Every query of this
 * module that returns rows selects `withdrawalColumns`, which names each column as that type does.
 */
import type { Queryable, WithdrawalRow } from '@wh/db'

export { WITHDRAWAL_STATES, type WithdrawalRow, type WithdrawalState } from '@wh/db'

/** Every column of `withdrawals`, named as WithdrawalRow names them (numerics as decimal strings). */
export function withdrawalColumns(sql: Queryable) {
  return sql`id, user_id as "userId", state, currency, amount::text as amount, chain, destination,
    network_fee::text as "networkFee", tx_hash as "txHash", idempotency_key as "idempotencyKey",
    failure_reason as "failureReason", created_at as "createdAt", updated_at as "updatedAt", sent_at as "sentAt",
    attempts, next_attempt_at as "nextAttemptAt", last_error_code as "lastErrorCode", held_at as "heldAt",
    hold_reason as "holdReason", send_errors as "sendErrors"`
}

/** The caller's withdrawal requested with this Idempotency-Key, if any. */
export async function withdrawalByIdempotencyKey(
  sql: Queryable,
  userId: string,
  key: string,
): Promise<WithdrawalRow | undefined> {
  const [row] = await sql<WithdrawalRow[]>`
    select ${withdrawalColumns(sql)} from withdrawals where user_id = ${userId} and idempotency_key = ${key}`
  return row
}

/** A position in the newest-first order: a row's created_at as Postgres prints it (microseconds) and its id. */
export interface WithdrawalPosition {
  readonly createdAt: string
  readonly id: string
}

export interface WithdrawalPage {
  /** newest first */
  readonly items: WithdrawalRow[]
  /** where the next page starts; null on the last page */
  readonly next: WithdrawalPosition | null
}

/**
 * One page of the user's withdrawals, newest first by (created_at, id), after `after` when given.
 *
 * @example
 *   const { items, next } = await withdrawalsPage(sql, userId, { limit: 20 })
 *   const more = next && (await withdrawalsPage(sql, userId, { limit: 20, after: next }))
 */
export async function withdrawalsPage(
  sql: Queryable,
  userId: string,
  page: { limit: number; after?: WithdrawalPosition | undefined },
): Promise<WithdrawalPage> {
  const { after, limit } = page
  const rows = await sql<(WithdrawalRow & { createdAtText: string })[]>`
    select ${withdrawalColumns(sql)}, created_at::text as "createdAtText" from withdrawals
    where user_id = ${userId}
      ${after ? sql`and (created_at, id) < (${after.createdAt}::timestamptz, ${after.id}::uuid)` : sql``}
    order by created_at desc, id desc
    limit ${limit + 1}`
  const items = rows.slice(0, limit).map(({ createdAtText: _, ...row }) => row)
  const last = rows[limit - 1]
  return { items, next: rows.length > limit && last ? { createdAt: last.createdAtText, id: last.id } : null }
}
