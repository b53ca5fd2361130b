/**
 * Accounting benchmark (accruals and reconciliation), against the Derive simulator over
 * real HTTP, a throwaway durable Postgres and Redis: the accruals tick and the reconciliation tick
 * over N subaccounts (a fifth of them holding a perp, so funding has entries too), as the worker
 * runs them (runAccruals / runReconcile, under the cycle lock, ACCOUNTING_CONCURRENCY calls at a
 * time). Each row: exchange calls, events recorded and wall time per tick; the same ticks again
 * with a simulated round trip added to every exchange call (Derive is remote; the simulator is not).
 *
 *   pnpm --filter @wh/worker exec tsx bench/accounting.ts            500 subaccounts, 50 ms round trip
 *   pnpm --filter @wh/worker exec tsx bench/accounting.ts 100 100    100 subaccounts, 100 ms
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { loadConfig } from '@wh/config'
import { type Clock, toBaseUnits } from '@wh/core'
import { createDatabase, runMigrations } from '@wh/db'
import { startDeriveSimulator } from '@wh/derive-simulator'
import { DeriveClient, type ExchangeLogger, fromE18, toE18 } from '@wh/exchange'
import { appendBatch, type EventInput } from '@wh/ledger'
import {
  ACCOUNTING_CONCURRENCY,
  ACCRUAL_SETTLE_MS,
  RECONCILE_CURSOR_KEY,
  runAccruals,
  runReconcile,
} from '@wh/subaccounts'
import { localStackEnv, startPostgres, startRedis, TEST_OWNER_PRIVATE_KEY } from '@wh/testkit'
import { Redis } from 'ioredis'
import { buildWorkerDeps } from '../src/deps'
import { reconcileSources } from '../src/jobs/exchange/ticks'
import type { WorkerDeps } from '../src/ticks'
import { platformFunds } from '../test/fixtures/platform-funds'

const SUBACCOUNTS = Number(process.argv[2] ?? 500)
const RTT_MS = Number(process.argv[3] ?? 50)
const PERP_SHARE = 5 // one in five holds a perp
const DIVERGENT = 10
const HOUR = 3_600_000
const START = Date.UTC(2026, 0, 5, 0, 30)
const silent = { info() {}, warn() {} }

const rows: string[][] = []
const row = (...cells: Array<string | number>) => rows.push(cells.map(String))

const pg = await startPostgres({ durable: true })
const redisServer = await startRedis()
const sim = await startDeriveSimulator({ chainId: 901, startMs: START })
try {
  await runMigrations(pg.url)
  const database = createDatabase(pg.url, { max: 12, appName: 'accounting-bench' })
  const sql = database.sql
  const redis = new Redis(redisServer.url, { maxRetriesPerRequest: 1 })
  const env = { DATABASE_URL: pg.url, CACHE_URL: redisServer.url, LOG_LEVEL: 'silent', EXCHANGE_CHAIN_ID: '901' }
  // the platform's USDC in its funding subaccount, each subaccount opened by a transfer out of it
  const platform = platformFunds(sim, { USDC: String(SUBACCOUNTS * 10_000) }, env)
  const config = loadConfig(localStackEnv({ ...env, ...platform.env }))
  const calls = new Map<string, number>()
  const exchangeLogger: ExchangeLogger = {
    info: (o) => void calls.set(o.method, (calls.get(o.method) ?? 0) + 1),
    warn: (o) => void calls.set(o.method, (calls.get(o.method) ?? 0) + 1),
  }
  const clock: Clock = { now: () => new Date(sim.control.nowMs()) }
  const deps = buildWorkerDeps(config, { sql, redis, log: silent }, { clock, exchangeLogger })
  /** the same client with a round trip added to every request, as a remote exchange has */
  const remote: WorkerDeps = {
    ...deps,
    exchange: new DeriveClient({
      httpUrl: config.exchange.httpUrl,
      wallet: config.exchange.walletAddress,
      sessionKey: config.keys.sessionPrivateKey,
      chainId: config.exchange.chainId,
      ...(config.exchange.fundingSubaccountId !== undefined && {
        fundingSubaccountId: config.exchange.fundingSubaccountId,
      }),
      subaccountCreationFeeCapUsd: config.exchange.subaccountCreationFeeCapUsd,
      clock,
      logger: exchangeLogger,
      fetch: async (input, init) => {
        await new Promise((r) => setTimeout(r, RTT_MS))
        return fetch(input, init)
      },
    }),
  }

  /** the owner itself (TEST_OWNER_PRIVATE_KEY): a perp is beyond the worker's key (it trades options only) */
  const owner = new DeriveClient({
    httpUrl: config.exchange.httpUrl,
    wallet: config.exchange.walletAddress,
    sessionKey: TEST_OWNER_PRIVATE_KEY,
    chainId: config.exchange.chainId,
    clock,
  })

  // --- N subaccounts at the simulator, recorded as the funding tick would
  const t = performance.now()
  const ids: number[] = []
  for (let i = 0; i < SUBACCOUNTS; i++) {
    const userId = randomUUID()
    const before = new Set((await deps.exchange.getSubaccounts()).subaccount_ids)
    const tx = await deps.exchange.createSubaccount({ asset_name: 'USDC', amount: '5000' })
    const exchangeId = (await deps.exchange.getSubaccounts()).subaccount_ids.find((id) => !before.has(id)) as number
    ids.push(exchangeId)
    await sql`insert into subaccounts (user_id, asset, exchange_id, created_at) values (${userId}, 'ETH', ${exchangeId}, ${clock.now()})`
    const amount = toBaseUnits('5000', 6)
    const events: EventInput[] = [
      {
        type: 'deposit_detected',
        payload: {
          userId,
          chain: 'base',
          txHash: `0x${randomBytes(32).toString('hex')}`,
          logIndex: 0,
          currency: 'USDC',
          amount,
        },
        occurredAt: clock.now(),
      },
      {
        type: 'subaccount_funded',
        payload: {
          userId,
          subaccountId: String(exchangeId),
          transactionId: tx.transaction_id,
          currency: 'USDC',
          amount,
        },
        occurredAt: clock.now(),
      },
    ]
    await appendBatch(sql, events)
    if (i % PERP_SHARE === 0) {
      const ask = (await deps.exchange.getTicker('ETH-PERP')).best_ask_price
      await owner.order({
        subaccount_id: exchangeId,
        instrument_name: 'ETH-PERP',
        direction: 'buy',
        amount: '0.5',
        limit_price: ask,
        max_fee: '10',
      })
      // the perp's fee has no event here (the trading issue journals trades): put the cash back,
      // so only the injected divergences below diverge
      sim.control.setBalance(exchangeId, 'USDC', '5000')
    }
  }
  const setupMs = Math.round(performance.now() - t)

  async function measure(name: string, fn: () => Promise<object>) {
    calls.clear()
    const [before] = await sql<{ n: number }[]>`select count(*)::int as n from ledger_events`
    const t0 = performance.now()
    const summary = await fn()
    const elapsed = performance.now() - t0
    const [after] = await sql<{ n: number }[]>`select count(*)::int as n from ledger_events`
    const total = [...calls.values()].reduce((s, n) => s + n, 0)
    const perMethod = [...calls.entries()]
      .sort()
      .map(([m, n]) => `${m.replace(/^private\//, '')} ${n}`)
      .join(', ')
    row(name, total, (after?.n ?? 0) - (before?.n ?? 0), Math.round(elapsed).toLocaleString('en-US'), perMethod)
    return summary
  }

  sim.control.advanceTo(START + 3 * HOUR + ACCRUAL_SETTLE_MS) // 03:35: hours 01:00 and 02:00 complete
  await measure('accruals tick, first run (2 complete hours)', () => runAccruals(deps, silent))
  await measure('accruals tick, re-run (nothing new)', () => runAccruals(deps, silent))
  sim.control.advance(30 * 60_000) // 04:05: the 03:00 hour completes, ingested by reconciliation
  await measure('reconcile tick, observe (ingest + compare)', () =>
    runReconcile(deps, reconcileSources, silent, { mode: 'observe' }),
  )
  const cashOnly = ids.filter((_, i) => i % PERP_SHARE !== 0).slice(0, DIVERGENT)
  for (const id of cashOnly) {
    const usdc = (await deps.exchange.getSubaccount(id)).collaterals.find((c) => c.asset_name === 'USDC')?.amount ?? '0'
    sim.control.setBalance(id, 'USDC', fromE18(toE18(usdc) + toE18('1')))
  }
  await redis.del(RECONCILE_CURSOR_KEY)
  const enforced = await measure(`reconcile tick, enforce, ${DIVERGENT} divergent`, () =>
    runReconcile(deps, reconcileSources, silent, { mode: 'enforce', epsilon: '0.01' }),
  )
  sim.control.advanceTo(START + 5 * HOUR + ACCRUAL_SETTLE_MS) // 05:35: the 04:00 hour completes
  await measure(`accruals tick, +${RTT_MS} ms round trip (1 new hour)`, () => runAccruals(remote, silent))
  await measure(`reconcile tick, +${RTT_MS} ms round trip`, () =>
    runReconcile(remote, reconcileSources, silent, { mode: 'observe' }),
  )

  const header = ['scenario', 'exchange calls', 'events', 'ms', 'calls per method']
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (i === 0 || i === 4 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join(' | ')} |`
  console.log(
    `\n${SUBACCOUNTS} subaccounts (${Math.ceil(SUBACCOUNTS / PERP_SHARE)} with a perp), set up in ${setupMs} ms; ` +
      `${ACCOUNTING_CONCURRENCY} exchange calls at a time; enforce run: ${JSON.stringify(enforced)}`,
  )
  console.log(line(header))
  console.log(`| ${widths.map((w, i) => (i === 0 || i === 4 ? '-'.repeat(w) : `${'-'.repeat(w - 1)}:`)).join(' | ')} |`)
  for (const r of rows) console.log(line(r))
  redis.disconnect()
  await database.close()
} finally {
  await sim.close()
  await redisServer.stop()
  await pg.stop()
}
