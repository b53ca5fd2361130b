/**
 * Placing benchmark: the placing tick (runPlacing, cycle lock included)
 * against the Derive simulator over real HTTP, on a durable throwaway Postgres and Redis.
 *   1. choose: N funded positions get their expiry, strike (delta from the tickers) and size;
 *   2. place: each gets its post-only order (open orders read, order signed and sent);
 *   3. cross: the window ends, each rest is sold at the bid and its fills recorded (option_sold);
 *   4. fees: each subaccount's platform fees moved to the platform's funding subaccount (the fees tick);
 *   5. buy-back: each leg quoted (DELETE of an open leg) and bought back with one IOC order.
 * Figures: positions per second per phase, exchange calls, tick runs.
 *
 *   pnpm --filter @wh/worker exec tsx bench/trading.ts          200 positions
 *   pnpm --filter @wh/worker exec tsx bench/trading.ts 500      more
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { loadConfig } from '@wh/config'
import { createDatabase, runMigrations } from '@wh/db'
import { startDeriveSimulator } from '@wh/derive-simulator'
import { toE18 } from '@wh/exchange'
import { appendBatch, type EventInput } from '@wh/ledger'
import { strategyEventsOn } from '@wh/market'
import { runFeeCollection, runFunding } from '@wh/subaccounts'
import { localStackEnv, startPostgres, startRedis } from '@wh/testkit'
import { closePosition, PLACE_BATCH, type PriceReader, requestPosition, runPlacing, tradingProfile } from '@wh/trading'
import { Redis } from 'ioredis'
import { buildWorkerDeps } from '../src/deps'
import { feeClaims } from '../src/jobs/exchange/ticks'
import { platformFunds } from '../test/fixtures/platform-funds'

const N = Number(process.argv[2] ?? 200)
const USDC = (n: number) => BigInt(n) * 1_000_000n
const silent = { info() {}, warn() {} }
const START = Date.UTC(2026, 10, 23, 9, 0, 0)

const pg = await startPostgres({ durable: true })
const redisServer = await startRedis()
const sim = await startDeriveSimulator({ chainId: 901, startMs: START })
try {
  sim.control.setPrice('ETH', '3000')
  await runMigrations(pg.url)
  const database = createDatabase(pg.url, { max: 16, appName: 'trading-bench' })
  const sql = database.sql
  const redis = new Redis(redisServer.url, { maxRetriesPerRequest: 1 })
  const env = { DATABASE_URL: pg.url, CACHE_URL: redisServer.url, LOG_LEVEL: 'silent', TRADING_PROFILE: 'balanced' }
  // the platform's USDC in its funding subaccount, which the funding tick draws on
  const platform = platformFunds(sim, { USDC: String(N * 10_000) }, env)
  const config = loadConfig(localStackEnv({ ...env, ...platform.env }))
  let exchangeCalls = 0
  const clock = { now: () => new Date(sim.control.nowMs()) }
  const deps = buildWorkerDeps(
    config,
    { sql, redis, log: silent },
    { clock, exchangeLogger: { info: () => void exchangeCalls++, warn: () => void exchangeCalls++ } },
  )
  const profile = tradingProfile('balanced')
  const place = {
    sql,
    exchange: deps.exchange,
    redis,
    clock,
    platformFeeRate: config.platformFeeRate,
    profile,
    strategyEvents: strategyEventsOn(redis),
  }

  const users = Array.from({ length: N }, () => randomUUID())
  const deposits: EventInput[] = users.map((userId) => ({
    type: 'deposit_detected',
    payload: {
      userId,
      chain: 'base',
      txHash: `0x${randomBytes(32).toString('hex')}`,
      logIndex: 0,
      currency: 'USDC',
      amount: USDC(10_000),
    },
    occurredAt: new Date(START),
  }))
  await appendBatch(sql, deposits)
  for (const userId of users) await requestPosition(sql, { userId, asset: 'ETH', side: 'put', amount: USDC(5_000) })
  // funding is the funding tick's work (bench/exchange.ts measures it): done before the clock starts
  for (let i = 0; i < 40; i++) {
    const s = await runFunding({ ...deps, log: silent })
    if (s.funded + s.pending + s.held === 0) break
  }

  const count = async (state: string) =>
    ((await sql<{ n: number }[]>`select count(*)::int as n from positions where state = ${state}`)[0]?.n ?? 0) as number
  const rows: string[][] = []
  async function phase(name: string, done: () => Promise<boolean>) {
    exchangeCalls = 0
    let runs = 0
    const t0 = performance.now()
    while (!(await done())) {
      const s = await runPlacing(place)
      runs++
      if (runs > 50 || (s.steps.error ?? 0) > 0) throw new Error(`${name}: ${JSON.stringify(s)}`)
    }
    const ms = performance.now() - t0
    rows.push([
      name,
      String(N),
      String(runs),
      String(exchangeCalls),
      Math.round(ms).toLocaleString('en-US'),
      (N / (ms / 1000)).toFixed(0),
    ])
  }
  // funded → requested → placing (instrument chosen)
  await phase('choose (expiry, strike by delta, size)', async () => (await count('placing')) === N)
  await phase('place (post-only order per position)', async () => {
    const [r] = await sql<{ n: number }[]>`select count(*)::int as n from positions where order_id is not null`
    return r?.n === N
  })
  sim.control.advance(profile.makerWindowMs + 60_000)
  await phase('cross at window end + fills recorded', async () => (await count('open')) === N)

  const [sold] = await sql<{ n: number }[]>`select count(*)::int as n from ledger_events where type = 'option_sold'`
  if ((sold?.n ?? 0) < N) throw new Error(`expected at least ${N} option_sold, found ${sold?.n}`)

  // fee collection: each subaccount's uncollected platform fees moved to the funding subaccount
  {
    exchangeCalls = 0
    let runs = 0
    const t0 = performance.now()
    const collected = async () =>
      (
        await sql<{ n: number }[]>`
          select count(distinct subaccount_id)::int as n from position_fills where fee_collected_at is not null`
      )[0]?.n ?? 0
    while ((await collected()) < N) {
      await runFeeCollection({ ...deps, log: silent }, feeClaims)
      if (++runs > 20) throw new Error(`fees not collected: ${await collected()} of ${N}`)
    }
    const ms = performance.now() - t0
    rows.push([
      'fee collection (transfer per subaccount)',
      String(N),
      String(runs),
      String(exchangeCalls),
      Math.round(ms).toLocaleString('en-US'),
      (N / (ms / 1000)).toFixed(0),
    ])
  }

  // buy-back: every leg closed at a quote (DELETE of an open leg), one IOC buy each
  const prices: PriceReader = async (instrument) => {
    const t = await deps.exchange.getTicker(instrument)
    return { askE18: toE18(t.best_ask_price), markE18: toE18(t.mark_price), tickE18: toE18(t.tick_size) }
  }
  const open = await sql<{ id: string; user_id: string }[]>`select id, user_id from positions where state = 'open'`
  {
    exchangeCalls = 0
    const t0 = performance.now()
    for (const p of open) await closePosition(sql, p.user_id, p.id, prices, clock.now())
    const ms = performance.now() - t0
    rows.push([
      'buy-back quote (DELETE of an open leg)',
      String(open.length),
      '-',
      String(exchangeCalls),
      Math.round(ms).toLocaleString('en-US'),
      (open.length / (ms / 1000)).toFixed(0),
    ])
  }
  await phase('buy-back (IOC buy + fills recorded)', async () => (await count('closed')) === open.length)

  const header = ['phase', 'positions', 'tick runs', 'exchange calls', 'ms', 'positions/s']
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join(' | ')} |`
  console.log(`\nplacing tick against the Derive simulator's v3 API over HTTP (batch ${PLACE_BATCH} per run)`)
  console.log(line(header))
  console.log(`| ${widths.map((w, i) => (i === 0 ? '-'.repeat(w) : `${'-'.repeat(w - 1)}:`)).join(' | ')} |`)
  for (const r of rows) console.log(line(r))
  console.log(`option_sold recorded: ${sold?.n}`)
  redis.disconnect()
  await database.close()
} finally {
  await sim.close()
  await redisServer.stop()
  await pg.stop()
}
