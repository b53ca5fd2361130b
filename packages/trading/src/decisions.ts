/**
 * The wheel's decision log (docs/trading.md "Why: the decision log"): why each leg was opened,
 * which expiry and strike were chosen among which candidates, why a wheel waited or skipped, and
 * when a conversion ran. The one writer of `wheel_decisions` (test/table-owners.test.ts): rows are
 * appended only, and only when the decision changes (the same kind and reason as the wheel's
 * latest row is not written again), so the table grows with decisions, not with the 10 s ticks.
 *
 * Each new row is published on Redis (`WHEEL_DECISIONS_CHANNEL`, one channel carrying the user
 * id, a `WheelDecisionMessage` in JSON) for the live account stream to forward to its user.
 */
import type { Sql } from '@wh/db'
import type { DecisionFacts, DecisionKind, DecisionReason } from './decision-facts'
import { decisionMessage } from './decision-messages'

export * from './decision-facts'
export * from './decision-messages'

/** The Redis pub/sub channel of new decisions (not key-prefixed; tests give theirs a namespace). */
export const WHEEL_DECISIONS_CHANNEL = 'wheel-decisions'
/** The channel under `namespace` (empty in a deployment). */
export const wheelDecisionsChannel = (namespace = ''): string => `${namespace}${WHEEL_DECISIONS_CHANNEL}`

/** A decision as the API answers it and the live stream forwards it. */
export interface WheelDecisionItem {
  readonly id: string
  /** when it was taken (the worker's clock), ISO */
  readonly at: string
  readonly kind: DecisionKind
  readonly reason: DecisionReason
  readonly positionId: string | null
  readonly facts: DecisionFacts
  readonly message: string
}

/** What is published on `WHEEL_DECISIONS_CHANNEL` for each new decision. */
export interface WheelDecisionMessage {
  readonly type: 'wheel_decision'
  readonly userId: string
  readonly wheelId: string
  readonly decision: WheelDecisionItem
}

/** What a decision publishes on (an ioredis client fits). */
export interface DecisionPublisher {
  publish(channel: string, message: string): Promise<unknown>
}

export interface DecisionInput {
  readonly wheelId: string
  readonly userId: string
  readonly positionId?: string | null
  readonly kind: DecisionKind
  readonly reason: DecisionReason
  readonly facts?: DecisionFacts
  readonly at: Date
}

interface Row {
  id: string
  seq: string
  kind: DecisionKind
  reason: DecisionReason
  position_id: string | null
  facts: DecisionFacts
  created_at: Date
}

const itemOf = (r: Row): WheelDecisionItem => ({
  id: r.id,
  at: r.created_at.toISOString(),
  kind: r.kind,
  reason: r.reason,
  positionId: r.position_id,
  facts: r.facts,
  message: decisionMessage(r.kind, r.reason, r.facts),
})

/**
 * Appends a decision unless the wheel's latest one has the same kind and reason (then nothing is
 * written and undefined is returned). The wheel's decisions are serialised by an advisory lock,
 * so two runs never both append the same change. A new row is published (a failed publish is
 * lost, never the decision: the API reads Postgres).
 */
export async function recordDecision(
  sql: Sql,
  d: DecisionInput,
  publisher?: DecisionPublisher,
  channel = WHEEL_DECISIONS_CHANNEL,
): Promise<WheelDecisionItem | undefined> {
  const facts = { ...d.facts, ...(d.facts?.detail && { detail: d.facts.detail.slice(0, 500) }) }
  const [row] = await sql.begin(async (t) => {
    await t`select pg_advisory_xact_lock(hashtextextended(${`wheel-decisions:${d.wheelId}`}, 0))`
    return t<Row[]>`
      insert into wheel_decisions (wheel_id, user_id, position_id, kind, reason, facts, created_at)
      select ${d.wheelId}, ${d.userId}, ${d.positionId ?? null}, ${d.kind}, ${d.reason}, ${t.json(facts as never)}, ${d.at}
      where not exists (
        select 1 from (select kind, reason from wheel_decisions where wheel_id = ${d.wheelId}
          order by seq desc limit 1) latest
        where latest.kind = ${d.kind} and latest.reason = ${d.reason})
      returning id, seq::text, kind, reason, position_id, facts, created_at`
  })
  if (!row) return undefined
  const decision = itemOf(row)
  if (publisher) {
    const message: WheelDecisionMessage = { type: 'wheel_decision', userId: d.userId, wheelId: d.wheelId, decision }
    try {
      await publisher.publish(channel, JSON.stringify(message))
    } catch {
      // the live stream misses it; GET /wheels/{id}/decisions has it
    }
  }
  return decision
}

export interface DecisionPage {
  readonly items: readonly WheelDecisionItem[]
  /** the `seq` of the page's last row when more follow */
  readonly nextSeq: string | null
}

/**
 * A wheel's decisions, newest first, `limit` per page after the row `beforeSeq` (a cursor). Only
 * the owner's wheel: undefined when `wheelId` is not one of `userId`'s wheels.
 */
export async function listDecisions(
  sql: Sql,
  userId: string,
  wheelId: string,
  page: { limit: number; beforeSeq?: string },
): Promise<DecisionPage | undefined> {
  const [wheel] = await sql`select 1 from wheels where id = ${wheelId} and user_id = ${userId}`
  if (!wheel) return undefined
  const rows = await sql<Row[]>`
    select id, seq::text, kind, reason, position_id, facts, created_at from wheel_decisions
    where wheel_id = ${wheelId} and user_id = ${userId}
      ${page.beforeSeq ? sql`and seq < ${page.beforeSeq}::bigint` : sql``}
    -- the column, not the text of it the select list names the same
    order by wheel_decisions.seq desc
    limit ${page.limit + 1}`
  const items = rows.slice(0, page.limit)
  return {
    items: items.map(itemOf),
    nextSeq: rows.length > page.limit ? (items.at(-1)?.seq ?? null) : null,
  }
}
