/**
 * Balance reads: O(slots) from ledger_balances, never a scan of postings. Each balance is kept in
 * the transaction that writes its postings (journal.ts), striped for `platform:` accounts.
 */
import type postgres from 'postgres'
import {
  type AccountName,
  isUserHolding,
  PLATFORM_FEE_REVENUE,
  parseAccount,
  USER_HOLDING_PATTERNS,
  type UserAccountFamily,
} from './accounts'
import { type Queryable, toBigInt } from './sql'

/** The balance of one account in one currency, in base units (0 when it never moved). */
export async function balanceOf(sql: Queryable, account: AccountName, currency: string): Promise<bigint> {
  const [row] = await sql<{ v: string | null }[]>`
    select sum(balance) as v from ledger_balances where account = ${account} and currency = ${currency}`
  return toBigInt(row?.v)
}

export interface AccountBalance {
  readonly account: AccountName
  readonly currency: string
  readonly balance: bigint
}

/** Every currency of one account. */
export async function accountBalances(sql: Queryable, account: AccountName): Promise<AccountBalance[]> {
  const rows = await sql<{ currency: string; v: string }[]>`
    select currency, sum(balance) as v from ledger_balances where account = ${account}
    group by currency order by currency`
  return rows.map((r) => ({ account, currency: r.currency, balance: toBigInt(r.v) }))
}

/** Every account and currency of one user. */
export async function userBalances(sql: Queryable, userId: string): Promise<AccountBalance[]> {
  const rows = await sql<{ account: string; currency: string; v: string }[]>`
    select account, currency, sum(balance) as v from ledger_balances where user_id = ${userId}
    group by account, currency order by account, currency`
  return rows.map((r) => ({ account: r.account as AccountName, currency: r.currency, balance: toBigInt(r.v) }))
}

export interface FamilyTotal {
  readonly family: UserAccountFamily
  readonly currency: string
  readonly balance: bigint
}

/** Per-user totals per account family (sub, transit, external, income, expense) and currency. */
export async function userFamilyTotals(sql: Queryable, userId: string): Promise<FamilyTotal[]> {
  const totals = new Map<string, FamilyTotal>()
  for (const b of await userBalances(sql, userId)) {
    const parsed = parseAccount(b.account)
    if (parsed?.bearer !== 'user') continue
    const k = `${parsed.family}:${b.currency}`
    const prev = totals.get(k)
    totals.set(k, { family: parsed.family, currency: b.currency, balance: (prev?.balance ?? 0n) + b.balance })
  }
  return [...totals.values()]
}

/** What the platform owes in one currency (docs/solvency.md "Continuous solvency"). */
export interface LiabilityTotal {
  readonly currency: string
  /** every user's `transit` */
  readonly transit: bigint
  /** every user's `sub:{sub}:{currency}` */
  readonly subaccounts: bigint
  /** `platform:fee_revenue`: journaled, partly still held in users' subaccounts until collected */
  readonly feeRevenue: bigint
}

/**
 * The liabilities per currency: the users' holdings (transit and subaccounts, net: a user's
 * negative balance lowers them) and the platform's fee revenue. One aggregate over
 * ledger_balances (a row per account, currency and slot), no scan of postings.
 *
 * @example
 *   const owed = await liabilityTotals(sql) // [{ currency: 'USDC', transit: 1_000_000n, subaccounts: 0n, feeRevenue: 0n }]
 */
export async function liabilityTotals(sql: Queryable): Promise<LiabilityTotal[]> {
  const [transit, sub] = USER_HOLDING_PATTERNS
  const rows = await sql<{ currency: string; transit: string; sub: string; fee: string }[]>`
    select currency,
      coalesce(sum(balance) filter (where user_id is not null and account like ${transit as string}), 0)::text as transit,
      coalesce(sum(balance) filter (where user_id is not null and account like ${sub as string}), 0)::text as sub,
      coalesce(sum(balance) filter (where account = ${PLATFORM_FEE_REVENUE}), 0)::text as fee
    from ledger_balances
    where user_id is not null or account = ${PLATFORM_FEE_REVENUE}
    group by currency order by currency`
  return rows.map((r) => ({
    currency: r.currency,
    transit: toBigInt(r.transit),
    subaccounts: toBigInt(r.sub),
    feeRevenue: toBigInt(r.fee),
  }))
}

/** One user's holdings per currency: transit plus every subaccount of that currency. */
export interface UserHoldings {
  readonly userId: string
  /** base units per currency, signed (a negative total is possible: see docs/solvency.md) */
  readonly balances: ReadonlyMap<string, bigint>
}

/** Every user's holdings, read in one snapshot of the ledger, and where that snapshot stands. */
export interface HoldingsSnapshot {
  /** every user with a transit or subaccount balance row (zero included), by user id */
  readonly users: readonly UserHoldings[]
  /** the database's clock when the snapshot was taken */
  readonly at: Date
  /** pg_current_snapshot() of the read: which ledger transactions the balances include */
  readonly snapshot: string
  /** the greatest event id visible in the snapshot (event ids are UUIDv7), null for an empty journal */
  readonly lastEventId: string | null
}

/** Rows fetched per round trip while streaming the balances. */
const HOLDINGS_BATCH = 10_000

/**
 * What the platform owes each user, per currency: `user:{u}:transit` plus every
 * `user:{u}:sub:*:{currency}` (proof of liabilities, docs/solvency.md), for every user at once.
 * One REPEATABLE READ, read-only transaction: every balance is of the same instant, so a funding
 * (transit to a subaccount) is seen entirely or not at all. Streams ledger_balances in batches; the
 * cost is one pass over the users' balance rows, never over postings.
 */
export async function userHoldingsSnapshot(sql: postgres.Sql): Promise<HoldingsSnapshot> {
  return sql.begin('isolation level repeatable read read only', async (tx) => {
    const [pos] = await tx<{ at: Date; snapshot: string; last_event_id: string | null }[]>`
      select now() as at, pg_current_snapshot()::text as snapshot,
        (select id from ledger_events order by id desc limit 1) as last_event_id`
    const byUser = new Map<string, Map<string, bigint>>()
    const [transit, sub] = USER_HOLDING_PATTERNS
    const rows = tx<{ user_id: string; account: string; currency: string; balance: string }[]>`
      select user_id, account, currency, balance from ledger_balances
      where user_id is not null and (account like ${transit as string} or account like ${sub as string})`
    for await (const batch of rows.cursor(HOLDINGS_BATCH)) {
      for (const r of batch) {
        if (!isUserHolding(parseAccount(r.account))) continue
        let balances = byUser.get(r.user_id)
        if (!balances) {
          balances = new Map()
          byUser.set(r.user_id, balances)
        }
        balances.set(r.currency, (balances.get(r.currency) ?? 0n) + toBigInt(r.balance))
      }
    }
    const users = [...byUser.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([userId, balances]) => ({ userId, balances }))
    return { users, at: pos?.at as Date, snapshot: pos?.snapshot as string, lastEventId: pos?.last_event_id ?? null }
  })
}
