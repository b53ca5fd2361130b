/**
 * `pnpm --filter @wh/ledger bench`: append throughput and read times on a durable (fsync on)
 * throwaway Postgres. Goals: >= 25,000 events/s batched; >= 1,500 single appends/s with
 * p99 < 10 ms; zero deadlocks with 10 writers sharing a hot platform account; reads independent of
 * table size (measured before and after filling the journal to 1,000,000 postings); what the
 * solvency run's balance check costs on that journal, in full and incrementally (docs/solvency.md
 * "Balances against postings").
 * BENCH_SCALE (default 1) scales every count down for a quick run.
 */
import { randomUUID } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { createDatabase, runMigrations } from '@wh/db'
import { startPostgres } from '@wh/testkit'
import {
  appendBatch,
  balanceOf,
  checkBalances,
  type EventInput,
  freeBalance,
  PLATFORM_FEE_REVENUE,
  portfolioSummary,
  statement,
  userTransit,
} from '../src/index'

const SCALE = Number(process.env.BENCH_SCALE ?? '1')
const n = (x: number) => Math.max(1, Math.round(x * SCALE))
const USERS = Array.from({ length: 2_000 }, () => randomUUID())
let seq = 0
const hex64 = (i: number) => `0x${i.toString(16).padStart(64, '0')}`
const pick = <T>(xs: readonly T[]) => xs[Math.floor(Math.random() * xs.length)]!

function deposit(userId = pick(USERS)): EventInput {
  return {
    type: 'deposit_detected',
    payload: { userId, chain: 'base', txHash: hex64(++seq), logIndex: 0, currency: 'USDC', amount: 1_000_000n },
    occurredAt: new Date(),
  }
}
/** touches the hot `platform:fee_revenue` account on every event */
function fill(userId = pick(USERS)): EventInput {
  return {
    type: 'option_sold',
    payload: {
      userId,
      subaccountId: '7',
      tradeId: `trade-${++seq}`,
      instrument: 'ETH-20260101-3000-P',
      currency: 'USDC',
      premium: 5_000_000n,
      exchangeFee: 30_000n,
      platformFee: 500_000n,
    },
    occurredAt: new Date(),
  }
}
const mixed = () => (Math.random() < 0.5 ? deposit() : fill())

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? Number.NaN
}
const one = <T>(rows: readonly T[]): T => rows[0]!
const isDeadlock = (e: unknown) => (e as { code?: string }).code === '40P01'

const pg = await startPostgres({ durable: true })
const rows: { case: string; figure: string; p50: string; p99: string; notes: string }[] = []
const ms = (x: number) => `${x.toFixed(2)} ms`
try {
  await runMigrations(pg.url)
  const { sql, close } = createDatabase(pg.url, { max: 24, appName: 'ledger-bench' })
  await appendBatch(
    sql,
    USERS.map((u) => deposit(u)),
  ) // every user has history; warms the plans

  async function writers(
    count: number,
    perWriter: number,
    batch: number,
    make: () => EventInput,
  ): Promise<{ rate: number; lat: number[]; deadlocks: number; errors: number }> {
    const lat: number[] = []
    let deadlocks = 0
    let errors = 0
    // the events are built before the clock starts: the figure is the append, not test data
    const prepared = Array.from({ length: count }, () =>
      Array.from({ length: perWriter }, () => Array.from({ length: batch }, make)),
    )
    const t0 = performance.now()
    await Promise.all(
      prepared.map(async (mine) => {
        for (const events of mine) {
          const s = performance.now()
          try {
            await appendBatch(sql, events)
          } catch (e) {
            if (isDeadlock(e)) deadlocks++
            else errors++
          }
          lat.push(performance.now() - s)
        }
      }),
    )
    const secs = (performance.now() - t0) / 1000
    return { rate: (count * perWriter * batch) / secs, lat, deadlocks, errors }
  }

  async function reads(label: string) {
    const u = pick(USERS)
    const time = async (f: () => Promise<unknown>, times = n(200)) => {
      const lat: number[] = []
      for (let i = 0; i < times; i++) {
        const s = performance.now()
        await f()
        lat.push(performance.now() - s)
      }
      return lat
    }
    const { count } = one(await sql<{ count: string }[]>`select count(*) from ledger_postings`)
    const period = { from: new Date(Date.now() - 86_400_000), to: new Date(Date.now() + 60_000) }
    for (const [what, f] of [
      ['balance (hot platform account, 16 slots)', () => balanceOf(sql, PLATFORM_FEE_REVENUE, 'USDC')],
      ['balance (user transit)', () => balanceOf(sql, userTransit(u), 'USDC')],
      ['free balance', () => freeBalance(sql, u, 'USDC')],
      ['portfolio summary', () => portfolioSummary(sql, u, period)],
      ['statement page (100)', () => statement(sql, u, { limit: 100 })],
    ] as const) {
      const lat = await time(f)
      rows.push({
        case: `${what} @ ${Number(count).toLocaleString('en-US')} postings`,
        figure: '',
        p50: ms(quantile(lat, 0.5)),
        p99: ms(quantile(lat, 0.99)),
        notes: label,
      })
    }
  }

  await reads('small table')

  {
    const r = await writers(1, n(3_000), 1, mixed)
    rows.push({
      case: 'single appends, 1 writer',
      figure: `${Math.round(r.rate)} events/s`,
      p50: ms(quantile(r.lat, 0.5)),
      p99: ms(quantile(r.lat, 0.99)),
      notes: `errors ${r.errors}`,
    })
  }
  {
    const r = await writers(4, n(1_000), 1, mixed)
    rows.push({
      case: 'single appends, 4 writers',
      figure: `${Math.round(r.rate)} events/s`,
      p50: ms(quantile(r.lat, 0.5)),
      p99: ms(quantile(r.lat, 0.99)),
      notes: `errors ${r.errors}`,
    })
  }
  {
    const r = await writers(10, n(1_000), 1, () => fill())
    rows.push({
      case: 'single appends, 10 writers, hot platform account',
      figure: `${Math.round(r.rate)} events/s`,
      p50: ms(quantile(r.lat, 0.5)),
      p99: ms(quantile(r.lat, 0.99)),
      notes: `deadlocks ${r.deadlocks}, errors ${r.errors}`,
    })
  }
  {
    const r = await writers(2, n(40), 1_000, mixed)
    rows.push({
      case: 'batches of 1,000, 2 writers',
      figure: `${Math.round(r.rate)} events/s`,
      p50: ms(quantile(r.lat, 0.5)),
      p99: ms(quantile(r.lat, 0.99)),
      notes: `per batch; deadlocks ${r.deadlocks}, errors ${r.errors}`,
    })
  }
  {
    const r = await writers(2, n(10), 5_000, mixed)
    rows.push({
      case: 'batches of 5,000, 2 writers',
      figure: `${r.rate.toFixed(0)} events/s`,
      p50: ms(quantile(r.lat, 0.5)),
      p99: ms(quantile(r.lat, 0.99)),
      notes: `per batch; deadlocks ${r.deadlocks}, errors ${r.errors}`,
    })
  }
  {
    const r = await writers(10, n(10), 1_000, () => fill())
    rows.push({
      case: 'batches of 1,000, 10 writers, hot platform account',
      figure: `${Math.round(r.rate)} events/s`,
      p50: ms(quantile(r.lat, 0.5)),
      p99: ms(quantile(r.lat, 0.99)),
      notes: `per batch; deadlocks ${r.deadlocks}, errors ${r.errors}`,
    })
  }

  // fill the journal to a million postings (deposits: 2 postings, fills: 4), then read again
  for (;;) {
    const { count } = one(await sql<{ count: string }[]>`select count(*) from ledger_postings`)
    if (Number(count) >= n(1_000_000)) break
    await writers(2, 20, 2_000, mixed)
  }
  await sql`vacuum analyze ledger_events`
  await sql`vacuum analyze ledger_postings`
  await reads('after fill')

  // the balance check on the filled journal: the daily full one, then an incremental one that sums
  // only the events written since (here 10,000, about a busy hour's worth)
  {
    const full = await checkBalances(sql, { full: true })
    const { count } = one(await sql<{ count: string }[]>`select count(*) from ledger_postings`)
    rows.push({
      case: 'balance check, full',
      figure: `${full.durationMs} ms`,
      p50: '',
      p99: '',
      notes: `${full.events} events, ${count} postings, ${full.accounts} balances; differences ${full.differenceCount}`,
    })
    await writers(2, n(5), 1_000, mixed)
    const inc = await checkBalances(sql, { full: false })
    rows.push({
      case: 'balance check, incremental',
      figure: `${inc.durationMs} ms`,
      p50: '',
      p99: '',
      notes: `${inc.events} events since the last check, ${inc.accounts} balances; differences ${inc.differenceCount}`,
    })
  }

  await close()
} finally {
  await pg.stop()
}

const cols = ['case', 'figure', 'p50', 'p99', 'notes'] as const
const width = cols.map((c) => Math.max(c.length, ...rows.map((r) => r[c].length)))
const line = (r: Record<(typeof cols)[number], string>) =>
  `| ${cols.map((c, i) => r[c].padEnd(width[i]!)).join(' | ')} |`
console.log(line({ case: 'case', figure: 'throughput', p50: 'p50', p99: 'p99', notes: 'notes' }))
console.log(`|${width.map((w) => '-'.repeat(w + 2)).join('|')}|`)
for (const r of rows) console.log(line(r))
