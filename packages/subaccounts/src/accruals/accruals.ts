/**
 * Accruals (spec 6 and 6.1; docs/exchange.md "Accruals and reconciliation"): the exchange's interest and perp-funding
 * histories become `interest_accrued` and `funding_paid`, one event per subaccount, type and UTC
 * hour (key `accrual:{sub}:{type}:{bucketTs}`), so a re-run adds nothing.
 *
 * Per subaccount, under the exchange cycle lock (cycle-lock.ts; `runAccruals` takes it, waiting up to
 * ACCOUNTING_LOCK_WAIT_MS; the worker's `exchange-accruals` tick, queue accounting, runs it every 15 min):
 *   1. read both histories from the cursor (`accrued_to_ms`) minus one hour of overlap up to now;
 *   2. sum them per hour (buckets.ts) and record only the complete hours, those that ended
 *      at least ACCRUAL_SETTLE_MS ago: a bucket recorded from a partial read would keep its wrong
 *      amount forever, since a later, complete read deduplicates against it (spec 6 rule 3);
 *   3. append the events and move the cursor to the end of the complete hours in ONE transaction,
 *      so a crash leaves either both or neither.
 * The overlap re-reads the last recorded hour: the same sum deduplicates silently; a different one
 * means the exchange wrote an entry late, which is logged (reconciliation then sees the gap).
 *
 * The currency: Derive pays interest on the cash balance only and settles perp funding in cash,
 * and its history entries carry no currency, so every accrual is in USDC. That is also why the
 * spec's key (no currency part) is enough: one event per (subaccount, type, hour) in one currency.
 * If the exchange ever paid interest in a second currency, the key would need a currency part
 * (a spec change); docs/exchange.md says so.
 *
 * On Derive v3 the platform's funding subaccount earns interest too (`ingestFundingSubaccountAccruals`):
 * the same buckets and keys, `interest_accrued` without a user (the platform's income), its cursor
 * kept in Redis, as it has no `subaccounts` row.
 */
import { CASH_CURRENCY } from '@wh/core'
import type { Sql } from '@wh/db'
import { type DeriveClient, type FundingEvent, toE18 } from '@wh/exchange'
import { appendBatch, type EventInput } from '@wh/ledger'
import {
  type AccountingDeps,
  type AccountingLog,
  currencyDecimals,
  type ExchangeSubaccount,
  runBounded,
  type SubaccountDbRow,
  toExchangeSubaccount,
} from '../accounting'
import { ACCOUNTING_LOCK_WAIT_MS, EXCHANGE_CYCLE_LOCK, withCycleLock } from '../cycle-lock'
import { advanceAccrualCursor } from '../subaccounts'
import { type AccrualEntry, closedBeforeMs, e18ToBaseUnits, HOUR_MS, sumByBucket } from './buckets'

/** An hour is recorded only this long after it ended: room for the exchange to write its entries. */
export const ACCRUAL_SETTLE_MS = 5 * 60_000
/** The recorded hour re-read on every run (a whole bucket, so its sum is complete again). */
export const ACCRUAL_OVERLAP_MS = HOUR_MS
/** Subaccounts per tick (the least recently advanced first). */
export const ACCRUALS_BATCH = 2_000
export const FUNDING_PAGE_SIZE = 1_000
/** 100 pages of 1,000: years of hourly funding on two perps; beyond that something is wrong. */
export const MAX_FUNDING_PAGES = 100

export interface AccrualIngest {
  /** false when nothing could have closed since the cursor and no pending sums were asked for */
  readonly read: boolean
  /** events appended now */
  readonly recorded: number
  /** events that already existed with the same payload (the overlap, a re-run) */
  readonly duplicates: number
  /** events that already existed with another amount: the exchange wrote an entry late */
  readonly late: number
  readonly cursorMs: number | null
  /**
   * Per currency, base units seen in hours not complete yet: already in the exchange's balance,
   * not yet in the journal. Reconciliation adds them to the journal side.
   */
  readonly pending: ReadonlyMap<string, bigint>
}

/**
 * What accruals are read for: a user's subaccount (a `subaccounts` row, which holds its cursor), or the platform's
 * funding subaccount on v3 (no user and no row: interest only, the caller keeps its cursor).
 */
export type AccrualSubject =
  | ExchangeSubaccount
  | {
      readonly userId?: undefined
      readonly exchangeId: number
      readonly ledgerId: string
      readonly accruedToMs: number | null
    }

interface Histories {
  readonly interest: AccrualEntry[]
  readonly funding: AccrualEntry[]
}

/** Derive's funding history is paged; read through the typed method, which the client adapts. */
async function fundingHistory(
  exchange: DeriveClient,
  subaccountId: number,
  startMs: number,
  endMs: number,
): Promise<FundingEvent[]> {
  const events: FundingEvent[] = []
  for (let page = 1; page <= MAX_FUNDING_PAGES; page++) {
    const r = await exchange.getFundingHistory({
      subaccount_id: subaccountId,
      start_timestamp: startMs,
      end_timestamp: endMs,
      page,
      page_size: FUNDING_PAGE_SIZE,
    })
    events.push(...r.events)
    if (page >= r.pagination.num_pages) return events
  }
  throw new Error(`funding history of subaccount ${subaccountId} exceeds ${MAX_FUNDING_PAGES} pages`)
}

async function readHistories(
  exchange: DeriveClient,
  subaccountId: number,
  window: { startMs: number; endMs: number; funding: boolean },
): Promise<Histories> {
  const { startMs, endMs } = window
  const [interest, funding] = await Promise.all([
    exchange.getInterestHistory({ subaccount_id: subaccountId, start_timestamp: startMs, end_timestamp: endMs }),
    window.funding ? fundingHistory(exchange, subaccountId, startMs, endMs) : [],
  ])
  const inWindow = (e: AccrualEntry) => e.timestampMs >= startMs && e.timestampMs <= endMs
  return {
    interest: interest.events.map((e) => ({ timestampMs: e.timestamp, amountE18: toE18(e.interest) })).filter(inWindow),
    funding: funding.map((e) => ({ timestampMs: e.timestamp, amountE18: toE18(e.funding) })).filter(inWindow),
  }
}

/** The complete hours' events of one subaccount, and the sum of its incomplete hours (already at the exchange). */
function accrualEvents(
  sub: AccrualSubject,
  histories: Histories,
  r: { decimals: number; closedBefore: number },
): { events: EventInput[]; pending: bigint } {
  const currency = CASH_CURRENCY
  const events: EventInput[] = []
  let pending = 0n
  for (const type of ['interest', 'funding'] as const) {
    for (const b of sumByBucket(histories[type])) {
      const amount = e18ToBaseUnits(b.amountE18, r.decimals)
      if (b.bucketTs * 1000 + HOUR_MS > r.closedBefore) {
        pending += amount
        continue
      }
      if (amount === 0n) continue // nothing to post; a late entry would still be recorded later
      const bucket = { subaccountId: sub.ledgerId, currency, bucketTs: b.bucketTs, amount }
      const occurredAt = new Date(b.lastMs)
      if (sub.userId === undefined) {
        // the platform's funding subaccount: interest only (readHistories read no funding for it)
        if (type === 'interest') events.push({ type: 'interest_accrued', payload: bucket, occurredAt })
        continue
      }
      const payload = { userId: sub.userId, ...bucket }
      events.push(
        type === 'interest'
          ? { type: 'interest_accrued', payload, occurredAt }
          : { type: 'funding_paid', payload, occurredAt },
      )
    }
  }
  return { events, pending }
}

/**
 * Records the complete hours of one subaccount's interest and funding and advances its cursor, in
 * one transaction; returns what is pending in the incomplete hours. Run under the cycle lock. For
 * the platform's funding subaccount (no row) the caller stores the returned `cursorMs`.
 *
 * @example
 *   const r = await ingestAccruals(deps, sub, { nowMs: deps.clock.now().getTime(), needPending: false }, log)
 */
export async function ingestAccruals(
  deps: Pick<AccountingDeps, 'sql' | 'exchange'>,
  sub: AccrualSubject,
  opts: { nowMs: number; needPending: boolean },
  log: AccountingLog,
): Promise<AccrualIngest> {
  const closedBefore = closedBeforeMs(opts.nowMs, ACCRUAL_SETTLE_MS)
  const nothingNew = sub.accruedToMs !== null && closedBefore <= sub.accruedToMs
  if (nothingNew && !opts.needPending)
    return { read: false, recorded: 0, duplicates: 0, late: 0, cursorMs: sub.accruedToMs, pending: new Map() }

  const startMs = sub.accruedToMs === null ? 0 : Math.max(0, sub.accruedToMs - ACCRUAL_OVERLAP_MS)
  const histories = await readHistories(deps.exchange, sub.exchangeId, {
    startMs,
    endMs: opts.nowMs,
    funding: sub.userId !== undefined,
  })
  const currency = CASH_CURRENCY
  const decimals = await currencyDecimals(deps.exchange, currency)
  const { events, pending } = accrualEvents(sub, histories, { decimals, closedBefore })

  const advance = sub.accruedToMs === null || closedBefore > sub.accruedToMs
  const rowId = 'id' in sub ? sub.id : null
  const results =
    events.length === 0 && !(advance && rowId)
      ? []
      : await deps.sql.begin(async (tx) => {
          const appended = events.length > 0 ? await appendBatch(tx, events) : []
          if (advance && rowId) await advanceAccrualCursor(tx, rowId, closedBefore)
          return appended
        })

  let recorded = 0
  let duplicates = 0
  let late = 0
  for (const r of results) {
    if (!r.duplicate) recorded++
    else if (r.payloadMismatch) {
      late++
      log.warn(
        { subaccountId: sub.ledgerId, key: r.event.idempotencyKey, recordedPayload: r.event.payload },
        'accrual bucket re-read with another amount: the exchange wrote an entry after the bucket was recorded',
      )
    } else duplicates++
  }
  return {
    read: true,
    recorded,
    duplicates,
    late,
    cursorMs: advance ? Math.max(sub.accruedToMs ?? 0, closedBefore) : sub.accruedToMs,
    pending: new Map(pending === 0n ? [] : [[currency, pending]]),
  }
}

/** The platform's funding subaccount on Derive (EXCHANGE_FUNDING_SUBACCOUNT_ID). */
export function fundingSubaccountOf(config: AccountingDeps['config']): number | undefined {
  return config.exchange.fundingSubaccountId
}

/** Where the funding subaccount's accrual cursor lives (it has no `subaccounts` row to hold `accrued_to_ms`). */
export const fundingAccrualCursorKey = (exchangeId: number) => `accruals:funding-subaccount:${exchangeId}:cursor`

/**
 * The platform's funding subaccount's interest (v3): `interest_accrued` without a user, per complete hour, as for a
 * user's subaccount. Its cursor is stored in Redis once the events are committed: a crash in between, or a lost key,
 * only makes the next run read again (from 0 without a key), and the keys deduplicate what was recorded.
 */
export async function ingestFundingSubaccountAccruals(
  deps: Pick<AccountingDeps, 'sql' | 'exchange' | 'redis'>,
  exchangeId: number,
  opts: { nowMs: number; needPending: boolean },
  log: AccountingLog,
): Promise<AccrualIngest> {
  const key = fundingAccrualCursorKey(exchangeId)
  const stored = await deps.redis.get(key)
  const accruedToMs = stored !== null && /^\d{1,16}$/.test(stored) ? Number(stored) : null
  const r = await ingestAccruals(deps, { exchangeId, ledgerId: String(exchangeId), accruedToMs }, opts, log)
  if (r.cursorMs !== null && r.cursorMs !== accruedToMs) await deps.redis.set(key, String(r.cursorMs))
  return r
}

/** The subaccounts at the exchange whose cursor is furthest behind, at most `limit`. */
export async function subaccountsForAccruals(sql: Sql, limit: number): Promise<ExchangeSubaccount[]> {
  const rows = await sql<SubaccountDbRow[]>`
    select id, user_id, asset, exchange_id, accrued_to_ms, stopped_at from subaccounts
    where exchange_id is not null
    order by accrued_to_ms asc nulls first, id
    limit ${limit}`
  return rows.map(toExchangeSubaccount)
}

export interface AccrualsSummary {
  /** false: another exchange tick held the cycle lock; nothing was done */
  ran: boolean
  subaccounts: number
  /** subaccounts whose histories were read */
  read: number
  recorded: number
  duplicates: number
  late: number
  errors: number
  /** left for the next tick (the time budget ran out) */
  deferred: number
  /** the platform's funding subaccount (null: none configured): events appended, late buckets, or an error */
  fundingSubaccount: { recorded: number; late: number; error: boolean } | null
}

/**
 * The accruals tick: every subaccount at the exchange (bounded batch, bounded time), under the
 * cycle lock. A subaccount that fails is logged and retried next tick; the others go on.
 */
export async function runAccruals(
  deps: AccountingDeps,
  log: AccountingLog,
  opts: { lockWaitMs?: number } = {},
): Promise<AccrualsSummary> {
  const summary: AccrualsSummary = {
    ran: false,
    subaccounts: 0,
    read: 0,
    recorded: 0,
    duplicates: 0,
    late: 0,
    errors: 0,
    deferred: 0,
    fundingSubaccount: null,
  }
  const outcome = await withCycleLock(
    deps.redis,
    async () => {
      summary.ran = true
      const subs = await subaccountsForAccruals(deps.sql, ACCRUALS_BATCH)
      summary.subaccounts = subs.length
      const nowMs = deps.clock.now().getTime()
      const started = await runBounded(subs, async (sub) => {
        try {
          const r = await ingestAccruals(deps, sub, { nowMs, needPending: false }, log)
          if (r.read) summary.read++
          summary.recorded += r.recorded
          summary.duplicates += r.duplicates
          summary.late += r.late
        } catch (err) {
          summary.errors++
          log.warn({ subaccountId: sub.ledgerId, err }, 'accruals failed for a subaccount')
        }
      })
      summary.deferred = subs.length - started
      const funding = fundingSubaccountOf(deps.config)
      if (funding !== undefined) summary.fundingSubaccount = await accrueFundingSubaccount(deps, funding, nowMs, log)
    },
    EXCHANGE_CYCLE_LOCK,
    { waitMs: opts.lockWaitMs ?? ACCOUNTING_LOCK_WAIT_MS },
  )
  if (!outcome.ran) log.info({}, 'accruals skipped: the exchange cycle lock is held')
  return summary
}

async function accrueFundingSubaccount(
  deps: AccountingDeps,
  exchangeId: number,
  nowMs: number,
  log: AccountingLog,
): Promise<NonNullable<AccrualsSummary['fundingSubaccount']>> {
  try {
    const r = await ingestFundingSubaccountAccruals(deps, exchangeId, { nowMs, needPending: false }, log)
    return { recorded: r.recorded, late: r.late, error: false }
  } catch (err) {
    log.warn({ subaccountId: String(exchangeId), err }, 'accruals failed for the funding subaccount')
    return { recorded: 0, late: 0, error: true }
  }
}
