import type { Sql } from '@wh/db'

/** Every balance summed over its slots, as `account|currency` → amount (zeros dropped). */
export async function balancesSnapshot(sql: Sql): Promise<Map<string, bigint>> {
  const rows = await sql<{ account: string; currency: string; v: string }[]>`
    select account, currency, sum(balance) as v from ledger_balances group by account, currency`
  return new Map(rows.filter((r) => BigInt(r.v) !== 0n).map((r) => [`${r.account}|${r.currency}`, BigInt(r.v)]))
}

/** Every account's postings summed, in the same shape. */
export async function postingsSnapshot(sql: Sql): Promise<Map<string, bigint>> {
  const rows = await sql<{ account: string; currency: string; v: string }[]>`
    select account, currency, sum(amount) as v from ledger_postings group by account, currency`
  return new Map(rows.filter((r) => BigInt(r.v) !== 0n).map((r) => [`${r.account}|${r.currency}`, BigInt(r.v)]))
}

export const txHash = (n: number) => `0x${n.toString(16).padStart(64, '0')}`

/** The single row of a query that returns exactly one. */
export function one<T>(rows: readonly T[]): T {
  if (rows.length !== 1) throw new Error(`expected one row, got ${rows.length}`)
  return rows[0]!
}
