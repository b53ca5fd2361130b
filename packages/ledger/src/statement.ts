/**
 * The statement behind GET /portfolio/statement: the user's events in time order
 * (occurred_at, then id), each with its postings to the user's own accounts and the running
 * balance of each account after it. Running balances count from the user's first event, not from
 * `from`, so a page shows true balances. Cursor pagination; the cursor is opaque to the client.
 */
import { AppError } from '@wh/core'
import { type AccountName, accountLabel, userAccountPrefix } from './accounts'
import type { EventType } from './events'
import { assertPeriod } from './period'
import { type Queryable, toBigInt } from './sql'

export const STATEMENT_DEFAULT_LIMIT = 100
export const STATEMENT_MAX_LIMIT = 500

export interface StatementPosting {
  readonly account: AccountName
  readonly currency: string
  readonly amount: bigint
  /** the account's balance in this currency after this event */
  readonly balanceAfter: bigint
}

export interface StatementRow {
  readonly eventId: string
  readonly type: EventType
  readonly occurredAt: Date
  readonly recordedAt: Date
  /** as stored: amounts are decimal strings of base units */
  readonly payload: Record<string, unknown>
  readonly postings: readonly StatementPosting[]
}

export interface StatementPage {
  readonly rows: readonly StatementRow[]
  /** pass back as `cursor` for the next page; null on the last page */
  readonly nextCursor: string | null
}

export interface StatementQuery {
  readonly from?: Date | undefined
  readonly to?: Date | undefined
  readonly cursor?: string | undefined
  /** 1..STATEMENT_MAX_LIMIT, default STATEMENT_DEFAULT_LIMIT */
  readonly limit?: number | undefined
}

export class InvalidCursorError extends AppError {
  constructor() {
    super({ code: 'INVALID_CURSOR', statusCode: 400, message: 'invalid statement cursor' })
  }
}
export class InvalidLimitError extends AppError {
  constructor(limit: number) {
    super({
      code: 'INVALID_LIMIT',
      statusCode: 400,
      message: `limit must be 1..${STATEMENT_MAX_LIMIT}`,
      details: { limit },
    })
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

function encodeCursor(occurredAt: Date, id: string): string {
  return Buffer.from(`${occurredAt.toISOString()}|${id}`).toString('base64url')
}
function decodeCursor(cursor: string): { occurredAt: Date; id: string } {
  const [iso, id, extra] = Buffer.from(cursor, 'base64url').toString('utf8').split('|')
  const occurredAt = new Date(iso ?? '')
  if (extra !== undefined || !id || !UUID.test(id) || Number.isNaN(occurredAt.getTime())) throw new InvalidCursorError()
  // only the form encodeCursor writes, years 1..9999: a forged time outside Postgres' range
  // (year 0, ±6-digit years) would otherwise fail in the query as a 500
  if (occurredAt.toISOString() !== iso || !/^\d{4}-/.test(iso) || iso.startsWith('0000-'))
    throw new InvalidCursorError()
  return { occurredAt, id }
}

/**
 * @example
 *   const page = await statement(sql, userId, { from, to, limit: 50 })
 *   const next = page.nextCursor && (await statement(sql, userId, { from, to, cursor: page.nextCursor }))
 */
export async function statement(sql: Queryable, userId: string, q: StatementQuery = {}): Promise<StatementPage> {
  assertPeriod(q)
  const limit = q.limit ?? STATEMENT_DEFAULT_LIMIT
  if (!Number.isInteger(limit) || limit < 1 || limit > STATEMENT_MAX_LIMIT) throw new InvalidLimitError(limit)
  const after = q.cursor === undefined ? undefined : decodeCursor(q.cursor)
  const prefix = userAccountPrefix(userId)

  const events = await sql<
    { id: string; type: EventType; payload: Record<string, unknown>; occurred_at: Date; recorded_at: Date }[]
  >`
    select id, type, payload, occurred_at, recorded_at from ledger_events
    where user_id = ${userId}
      ${q.from ? sql`and occurred_at >= ${q.from}` : sql``}
      ${q.to ? sql`and occurred_at < ${q.to}` : sql``}
      ${after ? sql`and (occurred_at, id) > (${after.occurredAt}, ${after.id}::uuid)` : sql``}
    order by occurred_at, id
    limit ${limit + 1}`
  const page = events.slice(0, limit)
  const last = page.at(-1)
  if (!last) return { rows: [], nextCursor: null }

  // running balances over the user's postings up to the page's last event (cost: the user's
  // history, not the journal's); only the page's own postings come back
  const postings = await sql<{ event_id: string; account: string; currency: string; amount: string; after: string }[]>`
    select * from (
      select p.event_id, p.account, p.currency, p.amount,
        sum(p.amount) over (partition by p.account, p.currency order by e.occurred_at, e.id
                            rows between unbounded preceding and current row) as after
      from ledger_events e join ledger_postings p on p.event_id = e.id
      where e.user_id = ${userId} and (e.occurred_at, e.id) <= (${last.occurred_at}, ${last.id}::uuid)
        and starts_with(p.account, ${prefix})
    ) x
    where x.event_id = any(${page.map((e) => e.id)}::uuid[])
    order by x.account, x.currency`
  const byEvent = new Map<string, StatementPosting[]>()
  for (const p of postings) {
    const list = byEvent.get(p.event_id) ?? []
    list.push({
      account: p.account as AccountName,
      currency: p.currency,
      amount: toBigInt(p.amount),
      balanceAfter: toBigInt(p.after),
    })
    byEvent.set(p.event_id, list)
  }
  return {
    rows: page.map((e) => ({
      eventId: e.id,
      type: e.type,
      occurredAt: e.occurred_at,
      recordedAt: e.recorded_at,
      payload: e.payload,
      postings: byEvent.get(e.id) ?? [],
    })),
    nextCursor: events.length > limit ? encodeCursor(last.occurred_at, last.id) : null,
  }
}

const csvField = (s: string) => (/[",\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s)

/**
 * One CSV line per posting (an event without postings gets one line with empty posting columns),
 * the account's name a person reads last (accountLabel),
 * for `format=csv`. `formatAmount` turns base units into the currency's decimal string; the route
 * passes one built from the token registry. The payload is left out: it is JSON, not a table.
 */
export function statementToCsv(
  rows: readonly StatementRow[],
  formatAmount: (currency: string, baseUnits: bigint) => string = (_c, v) => v.toString(),
): string {
  const lines = ['event_id,type,occurred_at,account,currency,amount,balance_after,account_label']
  for (const r of rows) {
    const head = [r.eventId, r.type, r.occurredAt.toISOString()]
    if (r.postings.length === 0) lines.push([...head, '', '', '', '', ''].map(csvField).join(','))
    for (const p of r.postings)
      lines.push(
        [
          ...head,
          p.account,
          p.currency,
          formatAmount(p.currency, p.amount),
          formatAmount(p.currency, p.balanceAfter),
          accountLabel(p.account),
        ]
          .map(csvField)
          .join(','),
      )
  }
  return `${lines.join('\n')}\n`
}
