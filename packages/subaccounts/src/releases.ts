/**
 * Releases of a subaccount (docs/exchange.md "Subaccounts: funding and release"): the one owner of
 * `subaccount_releases`. The API requests one (`requestRelease`); the worker's release tick moves
 * it through requested → waiting (reason) → withdrawing → released | failed with the transitions
 * below, each one conditional update, so a run that lost a race changes nothing.
 */
import { AppError, BusinessRuleError } from '@wh/core'
import type { Sql } from '@wh/db'
import { retryDelayMs } from '@wh/jobs'
import type { Queryable } from '@wh/ledger'

export type ReleaseState = 'requested' | 'waiting' | 'withdrawing' | 'released' | 'failed'
export const OPEN_RELEASE_STATES = ['requested', 'waiting', 'withdrawing'] as const

/** The caller has no subaccount for this asset (never funded). */
export class SubaccountNotFoundError extends AppError {
  constructor(asset: string) {
    super({ code: 'SUBACCOUNT_NOT_FOUND', statusCode: 404, message: `no subaccount for ${asset}` })
  }
}

/** A release of this subaccount is still open; its id is in `details`. */
export class ReleaseAlreadyOpenError extends AppError {
  constructor(releaseId: string) {
    super({
      code: 'RELEASE_ALREADY_OPEN',
      statusCode: 409,
      message: 'a release of this subaccount is already open',
      details: { releaseId },
    })
  }
}

/** The Idempotency-Key was used before for a release of another asset. */
export class IdempotencyKeyReusedError extends BusinessRuleError {
  constructor() {
    super('IDEMPOTENCY_KEY_REUSED', 'this Idempotency-Key was used for a different release request')
  }
}

export interface ReleaseView {
  id: string
  asset: string
  state: ReleaseState
  reason: string | null
  created_at: Date
  updated_at: Date
  completed_at: Date | null
}

const UNIQUE_VIOLATION = '23505'

async function byKey(q: Queryable, userId: string, key: string): Promise<ReleaseView | undefined> {
  const [row] = await q<ReleaseView[]>`
    select r.id, s.asset, r.state, r.reason, r.created_at, r.updated_at, r.completed_at
    from subaccount_releases r join subaccounts s on s.id = r.subaccount_id
    where r.user_id = ${userId} and r.idempotency_key = ${key}`
  return row
}

function sameAsset(row: ReleaseView, asset: string): ReleaseView {
  if (row.asset !== asset) throw new IdempotencyKeyReusedError()
  return row
}

/**
 * Requests the release of the caller's subaccount on `asset`: one open release per subaccount
 * (409 RELEASE_ALREADY_OPEN with its id), 404 without a subaccount. With an idempotency key a
 * retry, or a racing twin, answers the same release; the key on another asset is a 422.
 */
export async function requestRelease(
  sql: Sql,
  req: { userId: string; asset: string; idempotencyKey?: string },
): Promise<ReleaseView> {
  const { userId, asset, idempotencyKey: key } = req
  if (key !== undefined) {
    const earlier = await byKey(sql, userId, key)
    if (earlier) return sameAsset(earlier, asset)
  }
  try {
    return await sql.begin(async (tx) => {
      // the subaccount row lock serialises requests for one subaccount: one open release at most
      const [sub] = await tx<{ id: string }[]>`
        select id from subaccounts where user_id = ${userId} and asset = ${asset} for update`
      if (!sub) throw new SubaccountNotFoundError(asset)
      if (key !== undefined) {
        const raced = await byKey(tx, userId, key)
        if (raced) return sameAsset(raced, asset)
      }
      const [open] = await tx<{ id: string }[]>`
        select id from subaccount_releases
        where subaccount_id = ${sub.id} and state in ${tx([...OPEN_RELEASE_STATES])} limit 1`
      if (open) throw new ReleaseAlreadyOpenError(open.id)
      const [inserted] = await tx<ReleaseView[]>`
        insert into subaccount_releases (user_id, subaccount_id, state, idempotency_key)
        values (${userId}, ${sub.id}, 'requested', ${key ?? null})
        returning id, ${asset}::text as asset, state, reason, created_at, updated_at, completed_at`
      return inserted as ReleaseView
    })
  } catch (err) {
    if (key !== undefined && (err as { code?: string }).code === UNIQUE_VIOLATION) {
      const winner = await byKey(sql, userId, key)
      if (winner) return sameAsset(winner, asset)
    }
    throw err
  }
}

/**
 * An open release's place in the tick's queue (docs/hostile-world.md "Fair queues"): behind the
 * others; after a failure (`errorCode`) also backed off by its attempts.
 */
export async function deferRelease(sql: Sql, rel: { id: string; attempts: number }, errorCode?: string): Promise<void> {
  if (errorCode === undefined) {
    await sql`update subaccount_releases set next_attempt_at = now() where id = ${rel.id}`
    return
  }
  const attempts = rel.attempts + 1
  await sql`
    update subaccount_releases set attempts = ${attempts}, last_error_code = ${errorCode},
      next_attempt_at = now() + make_interval(secs => ${retryDelayMs(attempts) / 1000})
    where id = ${rel.id}`
}

/** open → waiting, saying why (written only when the state or the reason changes). */
export async function markReleaseWaiting(
  sql: Sql,
  rel: { id: string; state: ReleaseState; reason: string | null },
  reason: string,
): Promise<'waiting'> {
  if (rel.state !== 'waiting' || rel.reason !== reason)
    await sql`update subaccount_releases set state = 'waiting', reason = ${reason}, updated_at = now()
      where id = ${rel.id} and state in ('requested', 'waiting', 'withdrawing')`
  return 'waiting'
}

/** open → released. */
export async function markReleased(sql: Sql, releaseId: string, now: Date): Promise<'released'> {
  await sql`update subaccount_releases set state = 'released', reason = null, completed_at = ${now}, updated_at = now()
    where id = ${releaseId} and state in ('requested', 'waiting', 'withdrawing')`
  return 'released'
}

/** requested / waiting → withdrawing, in the caller's transaction (with its legs); false when another run moved it. */
export async function markReleaseWithdrawing(tx: Queryable, releaseId: string): Promise<boolean> {
  const [moved] = await tx`
    update subaccount_releases set state = 'withdrawing', reason = null, updated_at = now()
    where id = ${releaseId} and state in ('requested', 'waiting') returning id`
  return moved !== undefined
}

/** withdrawing → failed, with the reason (a leg refused for good); false when it was not withdrawing. */
export async function markReleaseFailed(sql: Sql, releaseId: string, reason: string, now: Date): Promise<boolean> {
  const rows = await sql`update subaccount_releases set state = 'failed', reason = ${reason}, completed_at = ${now},
    updated_at = now() where id = ${releaseId} and state = 'withdrawing' returning id`
  return rows.length > 0
}
