/**
 * Exchange funding benchmark: fundings per second through the funding
 * tick (runFunding, as the worker runs it, cycle lock included) against the Derive simulator's v3
 * API over real HTTP, on a durable throwaway Postgres and Redis; the platform's USDC sits in its
 * funding subaccount (test/fixtures/platform-funds.ts), each funding a transfer_spot out of it.
 *   1. first fundings: N users, each a create_subaccount (sign, store, send, get_transaction,
 *      journal), run to completion;
 *   2. second fundings: a deposit into each existing subaccount.
 * Every row costs three commits (submitted, accepted, funded + subaccount_funded). A deposit costs
 * two exchange calls (transfer_spot, get_transaction); a creation also reads the spot price for its
 * fee cap (get_currency), the wallet's subaccounts and transfer histories (the fee taken, the new
 * subaccount's id: packages/subaccounts/src/movements.ts).
 *
 *   pnpm --filter @wh/worker exec tsx bench/exchange.ts          200 users
 *   pnpm --filter @wh/worker exec tsx bench/exchange.ts 1000     more users
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { loadConfig } from '@wh/config'
import { createDatabase, runMigrations } from '@wh/db'
import { startDeriveSimulator } from '@wh/derive-simulator'
import { appendBatch, type EventInput, reserveFunding } from '@wh/ledger'
import { FUND_CONCURRENCY, runFunding } from '@wh/subaccounts'
import { localStackEnv, startPostgres, startRedis } from '@wh/testkit'
import { Redis } from 'ioredis'
import { buildWorkerDeps } from '../src/deps'
import { platformFunds } from '../test/fixtures/platform-funds'

const USERS = Number(process.argv[2] ?? 200)
const USDC = (n: number) => BigInt(n) * 1_000_000n
const silent = { info() {}, warn() {} }

const pg = await startPostgres({ durable: true })
const redisServer = await startRedis()
const sim = await startDeriveSimulator({ chainId: 901, clock: 'wall' })
try {
  await runMigrations(pg.url)
  const database = createDatabase(pg.url, { max: 24, appName: 'exchange-bench' })
  const redis = new Redis(redisServer.url, { maxRetriesPerRequest: 1 })
  const env = { DATABASE_URL: pg.url, CACHE_URL: redisServer.url, LOG_LEVEL: 'silent' }
  // the platform's USDC in its funding subaccount, each funding a transfer out of it
  const platform = platformFunds(sim, { USDC: String(USERS * 1_000) }, env)
  const config = loadConfig(localStackEnv({ ...env, ...platform.env }))
  let exchangeCalls = 0
  const deps = buildWorkerDeps(
    config,
    { sql: database.sql, redis, log: silent },
    { exchangeLogger: { info: () => void exchangeCalls++, warn: () => void exchangeCalls++ } },
  )

  const users = Array.from({ length: USERS }, () => randomUUID())
  const deposits: EventInput[] = users.map((userId) => ({
    type: 'deposit_detected',
    payload: {
      userId,
      chain: 'base',
      txHash: `0x${randomBytes(32).toString('hex')}`,
      logIndex: 0,
      currency: 'USDC',
      amount: USDC(1_000),
    },
    occurredAt: new Date(),
  }))
  await appendBatch(database.sql, deposits)

  const rows: string[][] = []
  async function round(name: string, amount: bigint) {
    for (const userId of users) await reserveFunding(database.sql, { userId, asset: 'ETH', currency: 'USDC', amount })
    exchangeCalls = 0
    const t0 = performance.now()
    let funded = 0
    let runs = 0
    while (funded < USERS) {
      const s = await runFunding({ ...deps, log: silent })
      funded += s.funded
      runs++
      if (s.failed > 0 || runs > 20) throw new Error(`${name}: ${JSON.stringify(s)}`)
    }
    const ms = performance.now() - t0
    rows.push([
      name,
      String(USERS),
      String(runs),
      String(exchangeCalls),
      Math.round(ms).toLocaleString('en-US'),
      (USERS / (ms / 1000)).toFixed(0),
    ])
  }
  await round('first funding (create_subaccount)', USDC(300))
  await round('second funding (deposit)', USDC(200))

  const [check] = await database.sql<{ n: number }[]>`
    select count(*)::int as n from ledger_events where type = 'subaccount_funded'`
  if (check?.n !== USERS * 2) throw new Error(`expected ${USERS * 2} subaccount_funded, found ${check?.n}`)

  const header = ['scenario', 'fundings', 'tick runs', 'exchange calls', 'ms', 'fundings/s']
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join(' | ')} |`
  console.log(`\nfunding tick against the Derive simulator's v3 API over HTTP, ${FUND_CONCURRENCY} subaccounts at once`)
  console.log(line(header))
  console.log(`| ${widths.map((w, i) => (i === 0 ? '-'.repeat(w) : `${'-'.repeat(w - 1)}:`)).join(' | ')} |`)
  for (const r of rows) console.log(line(r))
  redis.disconnect()
  await database.close()
} finally {
  await sim.close()
  await redisServer.stop()
  await pg.stop()
}
