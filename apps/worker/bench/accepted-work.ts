/**
 * Accepted work starts at once (docs/architecture.md "Accepted work: one job per 202"): the time from
 * a 202 to the work it accepted starting, with the API's jobs and with the ticks alone.
 *   - withdrawal: POST /withdrawals answered 202 → its outbound transaction broadcast (the outbox's
 *     row leaves `signed`);
 *   - position: POST /positions answered 202 → its funding signed and sent to the exchange (the
 *     subaccount_transfers row leaves `reserved`).
 * On a local stack: a durable throwaway Postgres, Redis, an anvil node (base, TestUSDC) and the
 * Derive simulator over HTTP; the real API (listening, called over HTTP) and a real BullMQ worker
 * runtime in this process running the row jobs' processors and the `withdrawals-send` (15 s) and
 * `exchange-fund` (5 s) ticks at their real periods. "ticks only" is the same stack with the API's
 * enqueue disabled, as before the jobs. Requests come one at a time at random intervals (0.5 to 2 s),
 * so they meet the ticks at every phase; each is observed by polling Postgres every 10 ms.
 *
 *   pnpm --filter @wh/worker exec tsx bench/accepted-work.ts        20 requests per scenario
 *   pnpm --filter @wh/worker exec tsx bench/accepted-work.ts 50     more
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { loadConfig } from '@wh/config'
import { createDatabase, runMigrations } from '@wh/db'
import { startDeriveSimulator } from '@wh/derive-simulator'
import { BULL_PREFIX, QUEUES } from '@wh/jobs'
import { appendBatch, type EventInput } from '@wh/ledger'
import { MARKET_NAMES, publishPriceUpdate, tryAcquireLease } from '@wh/market'
import { localStackEnv, prng, randomAddressFrom, startChain, startPostgres, startRedis } from '@wh/testkit'
import { deployTestUsdc, testUsdcAbi } from '@wh/wallet'
import { Queue } from 'bullmq'
import type { FastifyInstance } from 'fastify'
import { Redis } from 'ioredis'
import { createPublicClient, createWalletClient, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { buildServer } from '../../api/src/server'
import { buildWorkerDeps } from '../src/deps'
import { rowJobProcessors } from '../src/items/index'
import { fundTick } from '../src/jobs/exchange/ticks'
import { withdrawalSendTick } from '../src/jobs/withdrawals/ticks'
import { startRuntime } from '../src/runtime'
import { platformFunds } from '../test/fixtures/platform-funds'

const PER_SCENARIO = Number(process.argv[2] ?? 20)
const USDC = (n: number) => BigInt(n) * 1_000_000n
const POLL_MS = 10
const silent = { info() {}, warn() {} }
const random = prng(7)

const pg = await startPostgres({ durable: true })
const redisServer = await startRedis()
const chain = await startChain({ chainId: 8453 })
const sim = await startDeriveSimulator({ chainId: 901, clock: 'wall' })
try {
  await runMigrations(pg.url)
  const database = createDatabase(pg.url, { max: 20, appName: 'accepted-work-bench' })
  const sql = database.sql
  const redis = new Redis(redisServer.url, { maxRetriesPerRequest: 1 })
  const env = { DATABASE_URL: pg.url, CACHE_URL: redisServer.url, LOG_LEVEL: 'silent', RPC_URL_BASE: chain.rpcUrl }
  const platform = platformFunds(sim, { USDC: String(PER_SCENARIO * 4 * 1_000) }, env)
  const config = loadConfig(localStackEnv({ ...env, ...platform.env, FEE_SHARE_POLICY: 'warn' }))
  const deployer = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80')
  const transport = http(chain.rpcUrl)
  const usdc = await deployTestUsdc(
    createWalletClient({ account: deployer, transport }),
    createPublicClient({ transport }),
  )
  const deps = buildWorkerDeps(
    config,
    { sql, redis, log: silent },
    { chains: { base: { chainId: chain.chainId, usdc, confirmations: 1 } } },
  )
  const base = deps.clients.get('base')
  if (!base) throw new Error('no base clients')
  const mint = await base.walletClient.writeContract({
    account: deployer,
    address: usdc,
    abi: testUsdcAbi,
    functionName: 'mint',
    args: [deps.hotWallet('base').address, USDC(PER_SCENARIO * 4 * 50)],
    chain: null,
  })
  await base.publicClient.waitForTransactionReceipt({ hash: mint, pollingInterval: 20 })
  await seedEthPrice(redis)

  // the worker: the row jobs' processors and the two ticks that sweep the same rows, at their periods
  const connection = new Redis(redisServer.url, { maxRetriesPerRequest: null })
  const runtime = await startRuntime({
    connection,
    ticks: [withdrawalSendTick, fundTick, ...rowJobProcessors],
    consume: ['withdrawals', 'treasury', 'trading'],
    log: silent,
    deps,
  })
  // the API twice: adding its jobs, and not (the ticks alone)
  const queues = Object.values(QUEUES).map((n) => new Queue(n, { connection: redis, prefix: BULL_PREFIX }))
  const servers: FastifyInstance[] = []
  const apis = { jobs: await api(false), ticks: await api(true) }

  const rows: string[][] = []
  for (const [path, url] of Object.entries(apis))
    rows.push(
      await scenario(`withdrawal: 202 → broadcast (${path})`, url, '/withdrawals', broadcastOf, () => ({
        chain: 'base',
        asset: 'USDC',
        amount: '20',
        destination: randomAddressFrom(random),
      })),
    )
  for (const [path, url] of Object.entries(apis))
    rows.push(
      await scenario(`position: 202 → funding sent (${path})`, url, '/positions', fundingSentOf, () => ({
        asset: 'ETH',
        side: 'put',
        amount: '500',
      })),
    )

  const header = ['scenario', 'requests', 'median ms', 'p90 ms', 'max ms']
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join(' | ')} |`
  console.log('\naccepted work: from the 202 to its start, with the jobs and with the ticks alone (15 s and 5 s)')
  console.log(line(header))
  console.log(`| ${widths.map((w, i) => (i === 0 ? '-'.repeat(w) : `${'-'.repeat(w - 1)}:`)).join(' | ')} |`)
  for (const r of rows) console.log(line(r))

  await Promise.all(servers.map((s) => s.close()))
  await runtime.close()
  await Promise.all(queues.map((q) => q.close()))
  connection.disconnect()
  redis.disconnect()
  await database.close()

  /** An API listening on loopback; `disabled`: it adds no job. */
  async function api(disabled: boolean): Promise<string> {
    const app = await buildServer({
      config,
      database,
      redis,
      keyring: deps.keyring.publicOnly(),
      chains: deps.registry,
      queues,
      enqueue: { disabled },
      logger: false,
    })
    const at = await app.listen({ host: '127.0.0.1', port: 0 })
    servers.push(app)
    return at
  }

  /**
   * `PER_SCENARIO` requests, one at a time at random intervals, each by a new user holding 1,000 USDC;
   * the time from each 202 to `started` seeing its row's work begin.
   */
  async function scenario(
    name: string,
    url: string,
    route: string,
    started: (ids: string[]) => Promise<string[]>,
    body: () => object,
  ): Promise<string[]> {
    const acceptedAt = new Map<string, number>()
    const latencies: number[] = []
    let sending = true
    const watcher = (async () => {
      while (sending || acceptedAt.size > 0) {
        const seen = acceptedAt.size > 0 ? await started([...acceptedAt.keys()]) : []
        const now = performance.now()
        for (const id of seen) {
          latencies.push(now - (acceptedAt.get(id) as number))
          acceptedAt.delete(id)
        }
        await new Promise((r) => setTimeout(r, POLL_MS))
      }
    })()
    const deadline = performance.now() + 10 * 60_000
    for (let i = 0; i < PER_SCENARIO; i++) {
      await new Promise((r) => setTimeout(r, 500 + random() * 1_500))
      const userId = await credited(USDC(1_000))
      const res = await fetch(`${url}${route}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${servers[0]?.jwt.sign({ sub: userId })}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify(body()),
      })
      const at = performance.now()
      const answer = (await res.json()) as { id?: string }
      if (res.status !== 202 || !answer.id) throw new Error(`${name}: ${res.status} ${JSON.stringify(answer)}`)
      acceptedAt.set(answer.id, at)
    }
    sending = false
    while (acceptedAt.size > 0 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    if (acceptedAt.size > 0) throw new Error(`${name}: ${acceptedAt.size} never started`)
    await watcher
    latencies.sort((a, b) => a - b)
    const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] as number
    return [name, String(latencies.length), at(0.5).toFixed(0), at(0.9).toFixed(0), at(1).toFixed(0)]
  }

  /** Withdrawals whose transaction the outbox has broadcast (or already seen mined). */
  async function broadcastOf(ids: string[]): Promise<string[]> {
    const r = await sql<{ ref_id: string }[]>`
      select ref_id from outbound_txs
      where purpose = 'withdrawal' and ref_id = any(${ids}::text[]) and state <> 'signed'`
    return r.map((x) => x.ref_id)
  }

  /** Positions whose funding is signed and sent (it left `reserved`). */
  async function fundingSentOf(ids: string[]): Promise<string[]> {
    const r = await sql<{ id: string }[]>`
      select p.id from positions p join subaccount_transfers f on f.id = p.funding_transfer_id
      where p.id = any(${ids}::uuid[]) and f.state <> 'reserved'`
    return r.map((x) => x.id)
  }

  async function credited(amount: bigint): Promise<string> {
    const userId = randomUUID()
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
        occurredAt: new Date(),
      },
    ]
    await appendBatch(sql, events)
    return userId
  }
} finally {
  await sim.close()
  await chain.stop()
  await redisServer.stop()
  await pg.stop()
}

/** The ETH index as the price feed publishes it (the withdrawal bounds read it). */
async function seedEthPrice(redis: Redis): Promise<void> {
  const lease = await tryAcquireLease(redis, MARKET_NAMES.feedLease, 60_000)
  if (!lease) throw new Error('the feed lease is held')
  const ts = new Date().toISOString()
  await publishPriceUpdate(redis, MARKET_NAMES, lease.token, 'ETH', {
    ts,
    publishedAt: ts,
    index: '3000',
    mark: '3000',
    atmIv: null,
    instruments: [],
  })
  await lease.release()
}
// a client left with an open socket or timer must not keep the benchmark running past its report
process.exit(0)
