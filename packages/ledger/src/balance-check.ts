/**
 * Balances against postings (docs/solvency.md "Balances against postings"): every balance row the
 * free balance, the reserves, solvency and the proof of liabilities read must be the sum of the
 * postings of its account. ledger_append keeps them in the statement that writes the postings, and
 * the application's role cannot write a balance at all (migration 0029); this check finds what
 * neither would: a bug in that function, or a balance changed by someone holding the owner's rights.
 *
 * Incremental, so a run costs the events written since the last one, not the journal:
 * `ledger_check_sums` holds, per (account, currency), the postings of every event written by a
 * transaction below the last check's watermark, a transaction id below which every transaction had
 * ended when the check read (the snapshot's xmin: its events are all visible, none can still come).
 * A check reads, in one REPEATABLE READ snapshot, the balance rows, those sums and the postings of
 * the events of transactions at or above the previous watermark (the events' `tx_id` index), and
 * compares; then moves the sums up to its own watermark. The full check, once a day and whenever
 * there is no earlier check, sums every posting afresh instead of trusting the stored sums.
 * One check at a time (a session advisory lock): two at once would add the same events twice.
 */
import type { Sql } from '@wh/db'
import type { Queryable } from './sql'

/** The full check runs when the last one is older than this (and at the first check). */
export const FULL_BALANCE_CHECK_EVERY_MS = 24 * 60 * 60_000
/** Differences reported (and stored) per check at most; the count says how many there were. */
export const MAX_REPORTED_DIFFERENCES = 100
/** The advisory lock that keeps checks one at a time (any number unused elsewhere). */
const CHECK_LOCK = 7243100029

export interface BalanceDifference {
  readonly account: string
  readonly currency: string
  /** the balance rows summed over their slots */
  readonly balance: bigint
  /** the account's postings summed */
  readonly postings: bigint
}

export interface BalanceCheckResult {
  readonly id: number
  readonly kind: 'full' | 'incremental'
  readonly startedAt: Date
  readonly durationMs: number
  /** events whose postings this check summed */
  readonly events: number
  /** (account, currency) pairs with a balance row */
  readonly accounts: number
  /** how many pairs differ (the list is cut at MAX_REPORTED_DIFFERENCES) */
  readonly differenceCount: number
  readonly differences: readonly BalanceDifference[]
}

/**
 * Compares every balance with its postings and records the check (`ledger_checks`). `full`:
 * 'auto' (the default) re-sums every posting when the last full check is older than
 * FULL_BALANCE_CHECK_EVERY_MS; true or false forces it.
 *
 * @example
 *   const check = await checkBalances(sql)
 *   if (check.differenceCount > 0) await alerter.alert('ledger: balances differ from their postings', …)
 */
export async function checkBalances(sql: Sql, o: { full?: boolean | 'auto' } = {}): Promise<BalanceCheckResult> {
  // the lock is held by a session of its own, taken before the check's snapshot (a lock taken inside
  // a REPEATABLE READ transaction comes after its snapshot, which could then miss the sums the
  // previous holder committed)
  const lock = await sql.reserve()
  try {
    await lock`select pg_advisory_lock(${CHECK_LOCK})`
    try {
      return await runCheck(sql, o)
    } finally {
      await lock`select pg_advisory_unlock(${CHECK_LOCK})`
    }
  } finally {
    lock.release()
  }
}

/** One check in one REPEATABLE READ snapshot: the comparison, the sums moved and its record commit together. */
async function runCheck(sql: Sql, o: { full?: boolean | 'auto' }): Promise<BalanceCheckResult> {
  const started = performance.now()
  const startedAt = new Date()
  return sql.begin('isolation level repeatable read', async (tx) => {
    // the snapshot's first statement: every transaction below xmin has ended and is seen by it
    const [snap] = await tx<{ w: string; prev: string | null; last_full: Date | null }[]>`
      select pg_snapshot_xmin(pg_current_snapshot())::text as w,
        (select watermark::text from ledger_checks order by id desc limit 1) as prev,
        (select max(started_at) from ledger_checks where kind = 'full') as last_full`
    const { w, prev, last_full } = snap as { w: string; prev: string | null; last_full: Date | null }
    const full =
      prev === null ||
      o.full === true ||
      ((o.full ?? 'auto') === 'auto' &&
        (last_full === null || startedAt.getTime() - last_full.getTime() >= FULL_BALANCE_CHECK_EVERY_MS))
    if (full) await resumAll(tx, w)
    const compared = await compare(tx, full ? w : (prev as string))
    if (!full) await moveSums(tx, prev as string, w)
    // a full check summed every event
    if (full) compared.events = Number((await tx<{ n: string }[]>`select count(*)::text as n from ledger_events`)[0]?.n)
    const kind = full ? ('full' as const) : ('incremental' as const)
    const durationMs = Math.round(performance.now() - started)
    const [row] = await tx<{ id: string }[]>`
      insert into ledger_checks (kind, started_at, duration_ms, watermark, events, accounts, difference_count,
        differences)
      values (${kind}, ${startedAt}, ${durationMs}, ${w}::xid8, ${compared.events}, ${compared.accounts},
        ${compared.differenceCount}, ${tx.json(compared.differences.map(differenceJson) as never)})
      returning id::text`
    return { id: Number(row?.id), kind, startedAt, durationMs, ...compared }
  })
}

const differenceJson = (d: BalanceDifference) => ({
  account: d.account,
  currency: d.currency,
  balance: d.balance.toString(),
  postings: d.postings.toString(),
})

/** The full check's first half: the sums rebuilt from every posting of a transaction below `w`. */
async function resumAll(tx: Queryable, w: string): Promise<void> {
  await tx`delete from ledger_check_sums`
  await tx`
    insert into ledger_check_sums (account, currency, amount)
    select p.account, p.currency, sum(p.amount) from ledger_postings p
    join ledger_events e on e.id = p.event_id
    where e.tx_id < ${w}::xid8
    group by p.account, p.currency`
}

/** Balances against the stored sums plus the postings of every visible event of a transaction at or above `from`. */
async function compare(
  tx: Queryable,
  from: string,
): Promise<{ events: number; accounts: number; differenceCount: number; differences: BalanceDifference[] }> {
  const rows = await tx<{ account: string; currency: string; balance: string; postings: string; n: string }[]>`
    with d as materialized (
      select p.account, p.currency, sum(p.amount) as v from ledger_events e
      join ledger_postings p on p.event_id = e.id
      where e.tx_id >= ${from}::xid8
      group by p.account, p.currency
    ), b as (
      select account, currency, sum(balance) as v from ledger_balances group by account, currency
    ), x as (
      select coalesce(b.account, s.account, d.account) as account, coalesce(b.currency, s.currency, d.currency) as currency,
        coalesce(b.v, 0) as balance, coalesce(s.amount, 0) + coalesce(d.v, 0) as postings
      from b
      full join ledger_check_sums s on s.account = b.account and s.currency = b.currency
      full join d on d.account = coalesce(b.account, s.account) and d.currency = coalesce(b.currency, s.currency)
    )
    select account, currency, balance::text, postings::text, count(*) over ()::text as n from x
    where balance <> postings
    order by account, currency
    limit ${MAX_REPORTED_DIFFERENCES}`
  const [counts] = await tx<{ events: string; accounts: string }[]>`
    select (select count(*) from ledger_events where tx_id >= ${from}::xid8)::text as events,
      (select count(*) from (select 1 from ledger_balances group by account, currency) g)::text as accounts`
  return {
    events: Number(counts?.events ?? 0),
    accounts: Number(counts?.accounts ?? 0),
    differenceCount: Number(rows[0]?.n ?? 0),
    differences: rows.map((r) => ({
      account: r.account,
      currency: r.currency,
      balance: BigInt(r.balance),
      postings: BigInt(r.postings),
    })),
  }
}

/** The incremental check's second half: the sums move up to `w` (events of transactions in [from, w)). */
async function moveSums(tx: Queryable, from: string, w: string): Promise<void> {
  await tx`
    insert into ledger_check_sums as s (account, currency, amount)
    select p.account, p.currency, sum(p.amount) from ledger_events e
    join ledger_postings p on p.event_id = e.id
    where e.tx_id >= ${from}::xid8 and e.tx_id < ${w}::xid8
    group by p.account, p.currency
    on conflict (account, currency) do update set amount = s.amount + excluded.amount`
}

export interface StoredBalanceCheck {
  readonly id: number
  readonly kind: 'full' | 'incremental'
  readonly startedAt: Date
  readonly durationMs: number
  readonly events: number
  readonly accounts: number
  readonly differenceCount: number
  /** as stored: amounts as decimal strings */
  readonly differences: ReadonlyArray<{ account: string; currency: string; balance: string; postings: string }>
}

/** The newest checks first (`limit` ≤ 100): what the desk and the alert compare with. */
export async function listBalanceChecks(sql: Queryable, limit = 1): Promise<StoredBalanceCheck[]> {
  const rows = await sql<(Omit<StoredBalanceCheck, 'id' | 'events'> & { id: string; events: string })[]>`
    select id::text, kind, started_at as "startedAt", duration_ms as "durationMs", events::text, accounts,
      difference_count as "differenceCount", differences
    from ledger_checks c order by c.id desc limit ${Math.min(Math.max(limit, 1), 100)}`
  return rows.map((r) => ({ ...r, id: Number(r.id), events: Number(r.events) }))
}
