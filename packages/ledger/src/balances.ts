/**
 * Balance reads: O(slots) from ledger_balances, never a scan of postings. Each balance is kept in
 * the transaction that writes its postings (journal.ts), striped for `platform:` accounts.
 */
import {
  type AccountName,
  PLATFORM_FEE_REVENUE,
  parseAccount,
  USER_SUB_LIKE,
  USER_TRANSIT_LIKE,
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
  const rows = await sql<{ currency: string; transit: string; sub: string; fee: string }[]>`
    select currency,
      coalesce(sum(balance) filter (where user_id is not null and account like ${USER_TRANSIT_LIKE}), 0)::text as transit,
      coalesce(sum(balance) filter (where user_id is not null and account like ${USER_SUB_LIKE}), 0)::text as sub,
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
