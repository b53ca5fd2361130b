/**
 * GET /metrics over a real Postgres and Redis: request counts by route
 * pattern, queue depths, the worker runtime's last successful tick, the reconciliation drift, the
 * ledger's appends of the last minute; access by METRICS_TOKEN; no secret in the output.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { type Config, SECRET_ENV_NAMES } from '@wh/config'
import { BULL_PREFIX, QUEUES, recordReconcileDrift, recordScanLag } from '@wh/jobs'
import { appendBatch } from '@wh/ledger'
import { clearPlatformStop, raisePlatformStop } from '@wh/ops'
import { storeRun } from '@wh/solvency'
import { integrationContext } from '@wh/testkit'
import { buildChainRegistry, DepositKeyring } from '@wh/wallet'
import { Queue } from 'bullmq'
import type { FastifyInstance } from 'fastify'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startRuntime } from '../../worker/src/runtime'
import { ledgerEventsSince, uuidv7LowerBound } from '../src/plugins/metrics-collect'
import { buildServer } from '../src/server'

const METRICS_TOKEN = 'metrics-scrape-token-for-the-tests-0123456789'
const silent = { info() {}, warn() {} }

/** the value of one sample line, e.g. `wh_queue_jobs{queue="deposits",state="waiting"}` */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

describe('GET /metrics', () => {
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  let redis: Redis
  let keyring: DepositKeyring
  const prefix = `m-${randomUUID().slice(0, 8)}`
  let queues: Queue[]
  let app: FastifyInstance
  const open: Array<{ close(): Promise<unknown> }> = []

  async function build(config: Config): Promise<FastifyInstance> {
    const server = await buildServer({
      config,
      database: ctx.database,
      redis,
      keyring,
      chains: buildChainRegistry(config),
      queues,
      bullPrefix: prefix,
      logger: false,
    })
    open.push(server)
    await server.ready()
    return server
  }

  beforeAll(async () => {
    ctx = await integrationContext()
    redis = new Redis(ctx.config.cacheUrl, { maxRetriesPerRequest: null })
    keyring = DepositKeyring.fromMnemonic(ctx.config.keys.masterMnemonic).publicOnly()
    queues = Object.values(QUEUES).map((name) => new Queue(name, { connection: redis, prefix }))
    app = await build(ctx.config)
  })
  afterAll(async () => {
    for (const o of open.reverse()) await o.close()
    await Promise.all(queues.map((q) => q.close()))
    redis.disconnect()
    await ctx.database.close()
  })

  it('reads queue depths, the last tick, the drift and the ledger append rate at scrape time', async () => {
    // a job nobody consumes (this test runs no deposits worker): waiting
    await queues.find((q) => q.name === QUEUES.deposits)?.add('metrics-waiting', {})
    // a worker replica runs one tick under the same prefix
    const tickName = `metrics-probe-${randomUUID().slice(0, 8)}`
    const before = Date.now()
    const runtime = await startRuntime({
      connection: redis,
      ticks: [{ name: tickName, queue: 'accounting', everyMs: 60_000, process: async () => {} }],
      consume: ['accounting'],
      prefix,
      log: silent,
    })
    try {
      const accounting = runtime.queues.get('accounting')
      while ((await accounting?.getCompletedCount()) === 0) await new Promise((r) => setTimeout(r, 20))
    } finally {
      await runtime.close()
    }
    await recordReconcileDrift(redis, new Map([['USDC', '12.5']]), prefix)
    const userId = randomUUID()
    await appendBatch(
      ctx.database.sql,
      [0, 1, 2].map((logIndex) => ({
        type: 'deposit_detected' as const,
        payload: {
          userId,
          chain: 'base',
          txHash: `0x${randomBytes(32).toString('hex')}`,
          logIndex,
          currency: 'USDC',
          amount: 1_000_000n,
        },
        occurredAt: new Date(),
      })),
    )

    const res = await app.inject({ method: 'GET', url: '/metrics' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toContain('text/plain')
    const text = res.body
    expect(sample(text, 'wh_queue_jobs{queue="deposits",state="waiting"}')).toBe(1)
    expect(sample(text, 'wh_queue_jobs{queue="deposits",state="failed"}')).toBe(0)
    expect(sample(text, 'wh_queue_jobs{queue="withdrawals",state="active"}')).toBe(0)
    const last = sample(text, `wh_tick_last_success_timestamp_seconds{tick="${tickName}"}`)
    expect(last).toBeGreaterThanOrEqual(before / 1000)
    expect(last).toBeLessThanOrEqual(Date.now() / 1000)
    expect(sample(text, `wh_tick_last_duration_seconds{tick="${tickName}"}`)).toBeGreaterThanOrEqual(0)
    expect(sample(text, 'wh_reconcile_drift{currency="USDC"}')).toBe(12.5)
    expect(sample(text, 'wh_ledger_events_last_minute')).toBe(3)
    expect(sample(text, 'wh_metrics_source_up{source="redis"}')).toBe(1)
    expect(sample(text, 'wh_metrics_source_up{source="postgres"}')).toBe(1)
    // process metrics (prom-client's defaults)
    expect(text).toContain('process_cpu_user_seconds_total')
    expect(text).toContain('nodejs_eventloop_lag_seconds')

    // one collection serves the scrapes of a few seconds: a second job shows up only later
    await queues.find((q) => q.name === QUEUES.deposits)?.add('metrics-waiting-2', {})
    const again = await app.inject({ method: 'GET', url: '/metrics' })
    expect(sample(again.body, 'wh_queue_jobs{queue="deposits",state="waiting"}')).toBe(1)
  })

  it('shows what waits on the money path: rows per state and age, failing codes, stops, halts and scan lag', async () => {
    const sql = ctx.database.sql
    const address = () => `0x${randomBytes(20).toString('hex')}`
    const [user] = await sql<{ id: string }[]>`
      insert into users (wallet_address, hd_index) values (${address()}, 424242) returning id`
    const userId = user?.id as string
    // two withdrawals waiting (one failing, ten minutes old), one held for an operator, one sent (history)
    await sql`insert into withdrawals (user_id, currency, amount, state, chain, destination, created_at, attempts, last_error_code)
      values (${userId}, 'USDC', 1, 'requested', 'base', ${address()}, now() - interval '10 minutes', 2, 'HOT_WALLET_SHORT'),
        (${userId}, 'USDC', 1, 'requested', 'base', ${address()}, now(), 0, null)`
    await sql`insert into withdrawals (user_id, currency, amount, state, chain, destination, held_at)
      values (${userId}, 'USDC', 1, 'requested', 'base', ${address()}, now())`
    await sql`insert into withdrawals (user_id, currency, amount, state, chain, destination)
      values (${userId}, 'USDC', 1, 'sent', 'base', ${address()})`
    // dust set aside by the sweep
    await sql`insert into deposits (chain, tx_hash, log_index, block_number, user_id, hd_index, address, token, amount, state,
        attempts, last_error_code)
      values ('base', ${`0x${randomBytes(32).toString('hex')}`}, 0, 1, ${userId}, 424242, ${address()}, 'ETH', 1, 'detected',
        1, 'BELOW_SWEEP_GAS')`
    await sql`insert into subaccounts (user_id, asset, exchange_id, stopped_at, stop_reason)
      values (${userId}, 'ETH', 9191, now(), 'drift')`
    await sql`insert into chain_cursors (chain, next_block, halted_at, halt_reason) values ('arbitrum', 10, now(), 'reorg')
      on conflict (chain) do update set halted_at = now()`
    await recordScanLag(redis, 'base', 7n, prefix)
    // a complete solvency run 1.5 USDC short, and the platform stopped
    await storeRun(sql, {
      startedAt: new Date(),
      complete: true,
      legs: [
        {
          side: 'asset',
          currency: 'ETH',
          kind: 'platform_wallet',
          place: 'base:gas:0x90F79bf6EB2c4f870365E785982E1f101E93b906',
          amount: 25n * 10n ** 16n,
        },
      ],
      totals: [{ currency: 'USDC', assets: 8_500_000n, liabilities: 10_000_000n, surplus: -1_500_000n }],
      surpluses: [],
      errors: [],
    })
    await raisePlatformStop(sql, { raisedBy: 'solvency', reason: 'test' })

    // a fresh server: the first's collection is cached for a few seconds
    const server = await build(ctx.config)
    const text = (await server.inject({ method: 'GET', url: '/metrics' })).body
    expect(sample(text, 'wh_open_rows{queue="withdrawals",state="requested"}')).toBe(2)
    expect(sample(text, 'wh_open_rows{queue="withdrawals",state="held"}')).toBe(1)
    expect(
      sample(text, 'wh_open_rows_oldest_age_seconds{queue="withdrawals",state="requested"}'),
    ).toBeGreaterThanOrEqual(590)
    expect(sample(text, 'wh_open_rows{queue="deposits",state="detected"}')).toBe(1)
    expect(sample(text, 'wh_open_rows_failing{queue="withdrawals",code="HOT_WALLET_SHORT"}')).toBe(1)
    expect(sample(text, 'wh_open_rows_failing{queue="deposits",code="BELOW_SWEEP_GAS"}')).toBe(1)
    expect(sample(text, 'wh_subaccounts_stopped')).toBe(1)
    expect(sample(text, 'wh_deposit_watch_halted{chain="arbitrum"}')).toBe(1)
    expect(sample(text, 'wh_deposit_scan_lag_blocks{chain="base"}')).toBe(7)
    expect(sample(text, 'wh_solvency_assets{currency="USDC"}')).toBe(8.5)
    expect(sample(text, 'wh_solvency_liabilities{currency="USDC"}')).toBe(10)
    expect(sample(text, 'wh_solvency_surplus{currency="USDC"}')).toBe(-1.5)
    expect(sample(text, 'wh_solvency_last_complete_age_seconds')).toBeLessThan(60)
    expect(sample(text, 'wh_platform_stopped')).toBe(1)
    expect(sample(text, 'wh_platform_wallet_balance{chain="base",role="gas",currency="ETH"}')).toBe(0.25)
    await clearPlatformStop(sql, { reason: 'test over', actor: 'test' })
    // history is not counted
    expect(text).not.toContain('state="sent"')
  })

  it('counts requests by method, route pattern and status, never by raw URL', async () => {
    await app.inject({ method: 'GET', url: '/health/live' })
    await app.inject({ method: 'GET', url: '/health/live' })
    await app.inject({ method: 'DELETE', url: `/positions/${randomUUID()}` }) // 401: no token
    await app.inject({ method: 'GET', url: '/no-such-route/secret-path-123?q=1' })
    const text = (await app.inject({ method: 'GET', url: '/metrics' })).body
    expect(sample(text, 'wh_http_requests_total{method="GET",route="/health/live",status_code="200"}')).toBe(2)
    expect(sample(text, 'wh_http_requests_total{method="DELETE",route="/positions/:id",status_code="401"}')).toBe(1)
    expect(sample(text, 'wh_http_requests_total{method="GET",route="(unmatched)",status_code="404"}')).toBe(1)
    expect(
      sample(text, 'wh_http_request_duration_seconds_count{method="GET",route="/health/live",status_code="200"}'),
    ).toBe(2)
    expect(text).toContain('wh_http_request_duration_seconds_bucket{le="0.005",method="GET",route="/health/live"')
    expect(text).not.toContain('secret-path-123')
  })

  it('the ledger append rate walks the primary key from the window start, not the journal', async () => {
    const bound = uuidv7LowerBound(Date.now() - 60_000)
    const plan = await ctx.database.sql.begin(async (tx) => {
      await tx`set local enable_seqscan = off`
      return tx.unsafe(
        `explain select count(*) from (select 1 from ledger_events where id >= '${bound}'::uuid limit 1000000) r`,
      )
    })
    const text = plan.map((r) => Object.values(r)[0]).join('\n')
    expect(text).toMatch(/(Index (Only )?Scan using|Bitmap Index Scan on) ledger_events_pkey/)
    expect(text).not.toContain('Seq Scan')
    // the bound sorts below every event id of its millisecond and above older ones
    expect(await ledgerEventsSince(ctx.database.sql, Date.now() + 60_000)).toBe(0)
    expect(await ledgerEventsSince(ctx.database.sql, Date.now() - 60_000)).toBe(3)
  })

  it('holds no secret value: none of the configured secrets appears in the output', async () => {
    const protectedApp = await build({ ...ctx.config, metricsToken: METRICS_TOKEN })
    const res = await protectedApp.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    })
    expect(res.statusCode).toBe(200)
    const secrets = [
      METRICS_TOKEN,
      ...SECRET_ENV_NAMES.map((n) => ctx.env[n]).filter((v): v is string => v !== undefined && v.length > 8),
    ]
    expect(secrets.length).toBeGreaterThan(5)
    for (const s of secrets) expect(res.body).not.toContain(s)
    expect(res.body).not.toContain(ctx.config.databaseUrl)
  })

  it('asks for its scrape token when METRICS_TOKEN is set (no operator password opens it); is not served in production without one', async () => {
    const protectedApp = await build({ ...ctx.config, metricsToken: METRICS_TOKEN })
    const anon = await protectedApp.inject({ method: 'GET', url: '/metrics' })
    expect(anon.statusCode).toBe(401)
    expect(anon.headers['www-authenticate']).toContain('Bearer')
    expect(anon.json().code).toBe('UNAUTHORIZED')
    for (const authorization of [
      `Bearer ${METRICS_TOKEN}x`,
      `Basic ${Buffer.from(`admin:${METRICS_TOKEN}`).toString('base64')}`,
    ]) {
      const wrong = await protectedApp.inject({ method: 'GET', url: '/metrics', headers: { authorization } })
      expect(wrong.statusCode).toBe(401)
    }
    // the credential guards /metrics only
    expect((await protectedApp.inject({ method: 'GET', url: '/health/live' })).statusCode).toBe(200)

    const production = await build({ ...ctx.config, nodeEnv: 'production', metricsToken: undefined })
    expect((await production.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(404)
    expect(BULL_PREFIX).toBe('wh') // the worker's hashes: wh:metrics:* in a deployment
  })
})
