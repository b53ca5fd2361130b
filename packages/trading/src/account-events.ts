/**
 * A user's own event stream, read side (docs/account-stream.md). The events are written by the
 * deferred triggers of migration 0021 on the tables whose rows change (deposits, withdrawals,
 * positions, position_fills, wheels, conversions, subaccounts): no code here or anywhere else
 * inserts them. This module reads what WS /ws/account sends: the events after a sequence number,
 * a bounded replay for a client that reconnects, and the snapshot a client starts from.
 *
 * It lives in @wh/trading because most of the stream is trading's (positions, fills, wheels,
 * conversions, stops) and the snapshot is trading's read model (open legs, wheels) plus the
 * ledger's balances, which this package already depends on; deposits and withdrawals reach it only
 * as rows the triggers wrote.
 */
import type { Queryable, Sql } from '@wh/db'
import { parseAccount, userBalances } from '@wh/ledger'
import { LIVE_POSITION_STATES } from './position-types'

/** Every kind of event the triggers write (docs/account-stream.md "Events"). */
export const ACCOUNT_EVENT_KINDS = [
  'deposit.credited',
  'deposit.swept',
  'withdrawal.requested',
  'withdrawal.sent',
  'withdrawal.confirmed',
  'withdrawal.failed',
  'position.state',
  'position.funded',
  'position.settled',
  'order.placed',
  'fill',
  'wheel.state',
  'wheel.decision',
  'conversion',
  'subaccount.stopped',
  'subaccount.resumed',
] as const
export type AccountEventKind = (typeof ACCOUNT_EVENT_KINDS)[number]

export interface AccountEvent {
  readonly seq: number
  readonly kind: AccountEventKind
  /** when the event was written (its transaction's commit), ISO-8601 */
  readonly at: string
  /** ids, states, tx hashes; amounts as base-unit strings with their currency, e18 strings for option figures */
  readonly data: Record<string, unknown>
}

/** A replay longer than this asks the client to resnapshot. */
export const MAX_REPLAY_EVENTS = 1_000
/** A replay whose first missed event is older than this asks the client to resnapshot. */
export const MAX_REPLAY_AGE_MS = 24 * 60 * 60 * 1000

interface EventRow {
  seq: string
  kind: AccountEventKind
  payload: Record<string, unknown>
  created_at: Date
}

const toEvent = (r: EventRow): AccountEvent => ({
  seq: Number(r.seq),
  kind: r.kind,
  at: r.created_at.toISOString(),
  data: r.payload,
})

/** The user's events after `afterSeq`, in order, at most `limit` (one index range of the primary key). */
export async function accountEventsAfter(
  sql: Queryable,
  userId: string,
  afterSeq: number,
  limit = MAX_REPLAY_EVENTS,
): Promise<AccountEvent[]> {
  const rows = await sql<EventRow[]>`
    select seq, kind, payload, created_at from account_events
    where user_id = ${userId} and seq > ${afterSeq} order by seq limit ${limit}`
  return rows.map(toEvent)
}

/** The user's last event number (0 before the first). */
export async function latestAccountSeq(sql: Queryable, userId: string): Promise<number> {
  const [row] = await sql<{ seq: string }[]>`select seq from account_event_seqs where user_id = ${userId}`
  return row ? Number(row.seq) : 0
}

export type ResnapshotReason = 'too_many' | 'too_old' | 'ahead'

export type Replay =
  | { readonly events: AccountEvent[]; readonly latestSeq: number }
  | { readonly resnapshot: ResnapshotReason; readonly latestSeq: number }

/**
 * Every event after `fromSeq`, or why the client must resnapshot instead: more than
 * MAX_REPLAY_EVENTS missed, the first missed one older than MAX_REPLAY_AGE_MS, or a `fromSeq`
 * past the user's last event (a client of another database).
 */
export async function replayAccountEvents(
  sql: Queryable,
  userId: string,
  fromSeq: number,
  now: Date,
  bounds: { maxEvents?: number; maxAgeMs?: number } = {},
): Promise<Replay> {
  const maxEvents = bounds.maxEvents ?? MAX_REPLAY_EVENTS
  const latestSeq = await latestAccountSeq(sql, userId)
  if (fromSeq > latestSeq) return { resnapshot: 'ahead', latestSeq }
  if (latestSeq - fromSeq > maxEvents) return { resnapshot: 'too_many', latestSeq }
  const events = await accountEventsAfter(sql, userId, fromSeq, maxEvents)
  const first = events[0]
  if (first && now.getTime() - Date.parse(first.at) > (bounds.maxAgeMs ?? MAX_REPLAY_AGE_MS))
    return { resnapshot: 'too_old', latestSeq }
  return { events, latestSeq: Math.max(latestSeq, events.at(-1)?.seq ?? 0) }
}

export interface AccountSnapshot {
  /** the last event the snapshot includes: live events follow from `seq + 1` */
  readonly seq: number
  /** the user's holdings: `transit` (at the platform) and each subaccount, base units */
  readonly balances: { account: 'transit' | 'sub'; subaccountId?: string; currency: string; amount: string }[]
  readonly positions: Record<string, unknown>[]
  readonly wheels: Record<string, unknown>[]
}

/**
 * Balances, live legs, wheels that are not stopped and the last event number, read in one
 * REPEATABLE READ transaction: the events after `seq` are exactly the changes the snapshot misses.
 */
export async function accountSnapshot(sql: Sql, userId: string): Promise<AccountSnapshot> {
  return sql.begin('isolation level repeatable read read only', async (tx) => {
    const seq = await latestAccountSeq(tx, userId)
    const balances: AccountSnapshot['balances'] = []
    for (const b of await userBalances(tx, userId)) {
      const p = parseAccount(b.account)
      if (p?.bearer !== 'user' || (p.family !== 'transit' && p.family !== 'sub')) continue
      balances.push({
        account: p.family,
        ...(p.family === 'sub' && { subaccountId: p.subaccountId }),
        currency: b.currency,
        amount: b.balance.toString(),
      })
    }
    const positions = await tx<Record<string, unknown>[]>`
      select id as "positionId", wheel_id as "wheelId", asset, side, state, instrument,
        strike_e18::text as "strikeE18", expiry_sec::text as "expirySec", size_e18::text as "sizeE18",
        filled_e18::text as "filledE18", premium::text as premium, collateral_currency as "collateralCurrency",
        collateral_amount::text as "collateralAmount"
      from positions where user_id = ${userId} and state in ${tx(LIVE_POSITION_STATES)} order by created_at`
    const wheels = await tx<Record<string, unknown>[]>`
      select id as "wheelId", asset, state, holding, cycles::text as cycles, current_position_id as "currentPositionId"
      from wheels where user_id = ${userId} and state <> 'stopped' order by created_at`
    return { seq, balances, positions: positions.map(stripNulls), wheels: wheels.map(stripNulls) }
  })
}

const stripNulls = (row: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(row).filter(([, v]) => v !== null && v !== undefined))
