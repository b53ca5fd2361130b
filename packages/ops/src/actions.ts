/**
 * The operators' log (the one owner of `operator_actions`): every decision an operator takes on the
 * money path is recorded with who took it and why (docs/hostile-world.md). Appended, never rewritten
 * (migration 0028: the application's role may not, and triggers refuse the owner). The actor is the
 * authenticated operator (the desk's session, the proxy's identity, the CLI's sign-in), never a name
 * a caller typed.
 */
import type { Queryable } from '@wh/db'

export const OPERATOR_ACTION_KINDS = [
  'chain_resumed',
  'outbound_rechecked',
  'outbound_failed',
  'outbound_marked_sent',
  'stop_cleared',
  'platform_stop_raised',
  'platform_stop_cleared',
  // Bull Board: a job retried, promoted, removed or a queue cleaned (apps/api/src/plugins/bull-board.ts)
  'queue_changed',
  // the platform's own capital journaled (capital.ts)
  'capital_recorded',
] as const
export type OperatorActionKind = (typeof OPERATOR_ACTION_KINDS)[number]

export interface OperatorAction {
  readonly action: OperatorActionKind
  readonly subject: string
  /** who: the authenticated operator */
  readonly actor: string
  readonly reason: string
  readonly details?: Record<string, unknown>
}

export async function recordOperatorAction(sql: Queryable, a: OperatorAction): Promise<void> {
  await sql`
    insert into operator_actions (action, subject, actor, reason, details)
    values (${a.action}, ${a.subject}, ${a.actor.slice(0, 200)}, ${a.reason.slice(0, 2000)},
      ${a.details ? sql.json(a.details as never) : null})`
}

export interface RecordedOperatorAction {
  readonly id: string
  readonly action: string
  readonly subject: string
  readonly actor: string
  readonly reason: string
  readonly details: Record<string, unknown> | null
  readonly at: Date
}

/** The operators' log, newest first: at most `limit` (≤ 500), before `before` when given. */
export async function listOperatorActions(
  sql: Queryable,
  q: { limit?: number; before?: Date; subject?: string } = {},
): Promise<RecordedOperatorAction[]> {
  const limit = Math.min(Math.max(q.limit ?? 100, 1), 500)
  return sql<RecordedOperatorAction[]>`
    select id::text, action, subject, actor, reason, details, created_at as at from operator_actions
    where (${q.before ?? null}::timestamptz is null or created_at < ${q.before ?? null}::timestamptz)
      and (${q.subject ?? null}::text is null or subject = ${q.subject ?? null}::text)
    order by created_at desc, id desc limit ${limit}`
}

/** The last decision recorded on `subject`, if any (what makes a repeated command idempotent). */
export async function lastOperatorAction(sql: Queryable, subject: string): Promise<RecordedOperatorAction | undefined> {
  return (await listOperatorActions(sql, { subject, limit: 1 }))[0]
}
