/**
 * What GET /metrics reads from Redis and Postgres at scrape time: queue depths, the worker's last
 * successful tick per tick name and its duration, the reconciliation drift, the ledger's appends
 * of the last minute. Each read is bounded by a deadline, and one collection serves every scrape
 * for `cacheMs` (monotonic time), so N Prometheus replicas or a scrape storm cost one round.
 */
import { decimalsOf } from '@wh/core'
import type { Sql } from '@wh/db'
import { lastTickDurationKey, lastTickKey, reconcileDriftKey, scanLagKey } from '@wh/jobs'
import { openPlatformStops } from '@wh/ops'
import { latestRun } from '@wh/solvency'
import type { Queue } from 'bullmq'
import type { Redis } from 'ioredis'
import { Counter, Gauge, type Registry } from 'prom-client'

/** one collection serves the scrapes of this period */
export const COLLECT_CACHE_MS = 5_000
/** each source's deadline */
export const COLLECT_TIMEOUT_MS = 1_000
/** the states whose depth is exported per queue */
export const QUEUE_STATES = ['waiting', 'active', 'delayed', 'failed'] as const
/** the append rate's window */
export const LEDGER_WINDOW_MS = 60_000
/** the append count stops here: a bound on the index range the query walks */
export const LEDGER_COUNT_CAP = 1_000_000
/** fields read from one metric hash (tick names, currencies): a bound on the series exported */
export const MAX_HASH_FIELDS = 500

export interface CollectSources {
  sql: Sql
  redis: Redis
  queues: readonly Queue[]
  /** key prefix of the worker's metric hashes (the queues' BullMQ prefix) */
  prefix: string
  cacheMs?: number
  timeoutMs?: number
  /** wall-clock ms, for the ledger window */
  nowMs?: () => number
}

/**
 * The smallest UUIDv7 of a millisecond. Event ids are UUIDv7 stamped by the appender
 * (@wh/ledger), so `id >= bound` is a range scan of the primary key over the recent events only.
 */
export function uuidv7LowerBound(ms: number): string {
  const h = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0').slice(-12)
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-0000-0000-000000000000`
}

/** Events appended since `sinceMs` (appender's clock), at most LEDGER_COUNT_CAP. */
export async function ledgerEventsSince(sql: Sql, sinceMs: number): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    select count(*)::int as n from (
      select 1 from ledger_events where id >= ${uuidv7LowerBound(sinceMs)}::uuid limit ${LEDGER_COUNT_CAP}
    ) recent`
  return row?.n ?? 0
}

interface OpenRowState {
  queue: string
  state: string
  n: number
  oldest: number
}

/**
 * The rows that wait on the money path, per queue and state, with the oldest one's age. Only open
 * states are read, each through its table's partial index, so the cost follows what waits, not the
 * history (sent withdrawals, swept deposits, finished transfers are never counted).
 */
export async function openRowStates(sql: Sql): Promise<OpenRowState[]> {
  return sql<OpenRowState[]>`
    select 'withdrawals' as queue, case when held_at is not null then 'held' else state end as state,
      count(*)::int as n, extract(epoch from now() - min(created_at))::float8 as oldest
    from withdrawals where state = 'requested' group by 2
    union all
    select 'deposits', case when held_at is not null then 'held' else state end, count(*)::int,
      extract(epoch from now() - min(created_at))::float8
    from deposits where state <> 'swept' group by 2
    union all
    select kind, state, count(*)::int, extract(epoch from now() - min(created_at))::float8
    from subaccount_transfers where state in ('reserved', 'submitted', 'accepted') group by 1, 2
    union all
    select 'releases', state, count(*)::int, extract(epoch from now() - min(created_at))::float8
    from subaccount_releases where state in ('requested', 'waiting', 'withdrawing') group by 2
    union all
    select 'conversions', state, count(*)::int, extract(epoch from now() - min(created_at))::float8
    from conversions where state in ('planned', 'withdrawing', 'swapping', 'depositing') group by 2
    union all
    select 'outbound', state, count(*)::int, extract(epoch from now() - min(created_at))::float8
    from outbound_txs where state in ('signed', 'broadcast') group by 2`
}

/** Waiting rows whose last attempt failed, per queue and error code (bounded: codes are ours). */
export async function openRowFailures(sql: Sql): Promise<Array<{ queue: string; code: string; n: number }>> {
  return sql<Array<{ queue: string; code: string; n: number }>>`
    select 'withdrawals' as queue, last_error_code as code, count(*)::int as n from withdrawals
    where state = 'requested' and last_error_code is not null group by 2
    union all
    select 'deposits', last_error_code, count(*)::int from deposits
    where state <> 'swept' and last_error_code is not null group by 2
    union all
    select kind, last_error_code, count(*)::int from subaccount_transfers
    where state in ('reserved', 'submitted', 'accepted') and last_error_code is not null group by 1, 2
    union all
    select 'releases', last_error_code, count(*)::int from subaccount_releases
    where state in ('requested', 'waiting', 'withdrawing') and last_error_code is not null group by 2
    union all
    select 'conversions', last_error_code, count(*)::int from conversions
    where state in ('planned', 'withdrawing', 'swapping', 'depositing') and last_error_code is not null group by 2
    limit ${MAX_HASH_FIELDS}`
}

/**
 * Rows that ended failed or were held for an operator, per area and reason, since the start
 * (counted by migration 0046's triggers as each failure commits; docs/architecture.md "Business failures").
 */
export async function businessFailures(sql: Sql): Promise<Array<{ area: string; reason: string; n: number }>> {
  return sql<Array<{ area: string; reason: string; n: number }>>`
    select area, reason, count::float8 as n from business_failures order by area, reason limit ${MAX_HASH_FIELDS}`
}

function deadline<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)
    }),
  ]).finally(() => clearTimeout(timer))
}

/** '{deposits}' → 'deposits': the hash tag is Redis Cluster's business, not the dashboard's */
const queueLabel = (name: string) => name.replace(/[{}]/g, '')

function numericFields(hash: Record<string, string>): Array<[string, number]> {
  const out: Array<[string, number]> = []
  for (const [field, value] of Object.entries(hash)) {
    if (out.length >= MAX_HASH_FIELDS) break
    const n = Number(value)
    if (Number.isFinite(n)) out.push([field, n])
  }
  return out
}

type Registers = Registry[]

const gauge = (registers: Registers, name: string, help: string, labelNames: string[] = []) =>
  new Gauge({ name, help, labelNames, registers })

/** What the worker writes to Redis: queue counts, ticks, reconciliation drift, scan lag. */
function redisGauges(r: Registers) {
  return {
    queueJobs: gauge(r, 'wh_queue_jobs', 'BullMQ jobs per queue and state', ['queue', 'state']),
    lastTick: gauge(
      r,
      'wh_tick_last_success_timestamp_seconds',
      'When each tick (job name) last completed successfully, Unix time',
      ['tick'],
    ),
    lastDuration: gauge(
      r,
      'wh_tick_last_duration_seconds',
      "How long each tick's (job name's) last successful run took",
      ['tick'],
    ),
    drift: gauge(
      r,
      'wh_reconcile_drift',
      "Largest |exchange - journal| per currency in the latest reconciliation run, in the currency's units; absent: no divergence",
      ['currency'],
    ),
    scanLag: gauge(
      r,
      'wh_deposit_scan_lag_blocks',
      "Blocks between a chain's head and the last block its deposit watch scanned",
      ['chain'],
    ),
  }
}

/** What Postgres says: the append rate, rows waiting on the money path, stops and halts. */
function postgresGauges(r: Registers) {
  return {
    ledgerRecent: gauge(
      r,
      'wh_ledger_events_last_minute',
      `Ledger events appended in the last minute (the append rate; capped at ${LEDGER_COUNT_CAP})`,
    ),
    openRows: gauge(
      r,
      'wh_open_rows',
      'Rows waiting on the money path per queue (withdrawals, deposits, fund, release, releases, conversions, outbound) and state; held rows as state "held"',
      ['queue', 'state'],
    ),
    openOldest: gauge(r, 'wh_open_rows_oldest_age_seconds', 'Age of the oldest waiting row per queue and state', [
      'queue',
      'state',
    ]),
    openFailing: gauge(
      r,
      'wh_open_rows_failing',
      'Waiting rows whose last attempt failed, per queue and last error code (a tick that succeeds while its rows fail shows here)',
      ['queue', 'code'],
    ),
    stoppedSubaccounts: gauge(
      r,
      'wh_subaccounts_stopped',
      'Subaccounts stopped by reconciliation, waiting for an operator',
    ),
    chainHalted: gauge(
      r,
      'wh_deposit_watch_halted',
      "1 when a chain's deposit watch is halted for an operator (a reorg past its cursor)",
      ['chain'],
    ),
    platformStopped: gauge(
      r,
      'wh_platform_stopped',
      '1 while a platform stop is open (new positions and large withdrawals refused)',
    ),
    // a count kept in Postgres, shown as the counter it is (reset and set to the stored count at each collection)
    businessFailures: new Counter({
      name: 'wh_business_failures_total',
      help: 'Rows that ended failed or were held for an operator, by area (withdrawals, deposits, fund, release, releases, positions, conversions, …) and reason code',
      labelNames: ['area', 'reason'],
      registers: r,
    }),
  }
}

/** The last complete solvency run's figures (docs/solvency.md). */
function solvencyGauges(r: Registers) {
  return {
    assets: gauge(
      r,
      'wh_solvency_assets',
      'What the platform holds, per currency, at the last complete solvency run (whole units)',
      ['currency'],
    ),
    liabilities: gauge(
      r,
      'wh_solvency_liabilities',
      'What the platform owes, per currency, at the last complete solvency run (whole units)',
      ['currency'],
    ),
    surplus: gauge(
      r,
      'wh_solvency_surplus',
      'Assets minus liabilities per currency at the last complete solvency run (whole units; negative is a deficit)',
      ['currency'],
    ),
    age: gauge(
      r,
      'wh_solvency_last_complete_age_seconds',
      'Seconds since the last complete solvency run finished (absent before the first)',
    ),
    walletBalance: gauge(
      r,
      'wh_platform_wallet_balance',
      "A platform wallet's balance per chain, role (hot, gas, swap, exchange) and currency at the last complete solvency run (whole units)",
      ['chain', 'role', 'currency'],
    ),
  }
}

type RedisGauges = ReturnType<typeof redisGauges>
type PostgresGauges = ReturnType<typeof postgresGauges>
type SolvencyGauges = ReturnType<typeof solvencyGauges>
const resetAll = (gs: object) => {
  for (const g of Object.values(gs) as Array<Gauge | Counter>) g.reset()
}

async function fromRedis(g: RedisGauges, src: CollectSources): Promise<void> {
  const [counts, ticks, durations, drifts, lags] = await Promise.all([
    Promise.all(src.queues.map((q) => q.getJobCounts(...QUEUE_STATES))),
    src.redis.hgetall(lastTickKey(src.prefix)),
    src.redis.hgetall(lastTickDurationKey(src.prefix)),
    src.redis.hgetall(reconcileDriftKey(src.prefix)),
    src.redis.hgetall(scanLagKey(src.prefix)),
  ])
  resetAll(g)
  src.queues.forEach((q, i) => {
    for (const state of QUEUE_STATES) g.queueJobs.set({ queue: queueLabel(q.name), state }, counts[i]?.[state] ?? 0)
  })
  for (const [tick, ms] of numericFields(ticks)) g.lastTick.set({ tick }, ms / 1000)
  for (const [tick, ms] of numericFields(durations)) g.lastDuration.set({ tick }, ms / 1000)
  for (const [currency, amount] of numericFields(drifts)) g.drift.set({ currency }, amount)
  for (const [chain, blocks] of numericFields(lags)) g.scanLag.set({ chain }, blocks)
}

async function fromPostgres(g: PostgresGauges, s: SolvencyGauges, src: CollectSources, nowMs: number): Promise<void> {
  const [recent, rows, failing, [stopped], cursors, solvency, stops, failures] = await Promise.all([
    ledgerEventsSince(src.sql, nowMs - LEDGER_WINDOW_MS),
    openRowStates(src.sql),
    openRowFailures(src.sql),
    src.sql<{ n: number }[]>`select count(*)::int as n from subaccounts where stopped_at is not null`,
    src.sql<{ chain: string; halted: boolean }[]>`select chain, halted_at is not null as halted from chain_cursors`,
    latestRun(src.sql, { completeOnly: true }),
    openPlatformStops(src.sql),
    businessFailures(src.sql),
  ])
  resetAll(g)
  g.ledgerRecent.set(recent)
  for (const r of rows) {
    g.openRows.set({ queue: r.queue, state: r.state }, r.n)
    g.openOldest.set({ queue: r.queue, state: r.state }, r.oldest)
  }
  for (const r of failing) g.openFailing.set({ queue: r.queue, code: r.code }, r.n)
  g.stoppedSubaccounts.set(stopped?.n ?? 0)
  for (const c of cursors) g.chainHalted.set({ chain: c.chain }, c.halted ? 1 : 0)
  g.platformStopped.set(stops.length > 0 ? 1 : 0)
  for (const f of failures) g.businessFailures.inc({ area: f.area, reason: f.reason }, f.n)
  fillSolvency(s, solvency, nowMs)
}

function fillSolvency(s: SolvencyGauges, run: Awaited<ReturnType<typeof latestRun>>, nowMs: number): void {
  resetAll(s)
  if (!run) return
  // a gauge is a float: base units scaled to whole units here, for dashboards only
  const whole = (v: string, currency: string) => Number(v) / 10 ** (decimalsOf(currency) ?? 0)
  for (const t of run.totals) {
    s.assets.set({ currency: t.currency }, whole(t.assets, t.currency))
    s.liabilities.set({ currency: t.currency }, whole(t.liabilities, t.currency))
    s.surplus.set({ currency: t.currency }, whole(t.surplus, t.currency))
  }
  s.age.set((nowMs - run.finishedAt.getTime()) / 1000)
  // the gas wallet running dry stops sweeps: its balance per chain, from the run's own reads
  for (const l of run.legs) {
    if (l.kind !== 'platform_wallet') continue
    const [chain, role] = l.place.split(':')
    if (chain && role) s.walletBalance.set({ chain, role, currency: l.currency }, whole(l.amount, l.currency))
  }
}

/**
 * Registers the scrape-time gauges on `registry`; the returned `refresh()` brings them up to date
 * (at most once per `cacheMs`; concurrent callers share the run in flight).
 */
export function scrapeTimeMetrics(registry: Registry, src: CollectSources): { refresh(): Promise<void> } {
  const registers = [registry]
  const cacheMs = src.cacheMs ?? COLLECT_CACHE_MS
  const timeoutMs = src.timeoutMs ?? COLLECT_TIMEOUT_MS
  const nowMs = src.nowMs ?? Date.now
  const sourceUp = gauge(
    registers,
    'wh_metrics_source_up',
    'Whether the last scrape-time read of a source (redis, postgres) succeeded (1) or not (0); its series are absent while 0',
    ['source'],
  )
  const fromRedisGauges = redisGauges(registers)
  const fromPostgresGauges = postgresGauges(registers)
  const fromSolvency = solvencyGauges(registers)

  async function read(source: 'redis' | 'postgres', fn: () => Promise<void>, clear: () => void): Promise<void> {
    try {
      await deadline(fn(), timeoutMs)
      sourceUp.set({ source }, 1)
    } catch {
      // no figures rather than stale ones: the dashboard shows the gap, wh_metrics_source_up says why
      clear()
      sourceUp.set({ source }, 0)
    }
  }

  let lastMs = Number.NEGATIVE_INFINITY
  let inFlight: Promise<void> | undefined
  return {
    refresh() {
      if (performance.now() - lastMs < cacheMs) return Promise.resolve()
      inFlight ??= Promise.all([
        read(
          'redis',
          () => fromRedis(fromRedisGauges, src),
          () => resetAll(fromRedisGauges),
        ),
        read(
          'postgres',
          () => fromPostgres(fromPostgresGauges, fromSolvency, src, nowMs()),
          () => {
            resetAll(fromPostgresGauges)
            resetAll(fromSolvency)
          },
        ),
      ])
        .then(() => {
          lastMs = performance.now()
        })
        .finally(() => {
          inFlight = undefined
        })
      return inFlight
    },
  }
}
