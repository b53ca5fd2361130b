/**
 * `pnpm bench` (api): 5,000 concurrent /ws/prices clients against the real API in its own process,
 * fed by the real price feed (@wh/market, the worker's code) subscribed to the Derive simulator's
 * ticker channels, through real Redis pub/sub; real Postgres for candles and GET /assets.
 * Reports delivery latency p50/p99 (from the moment the simulator's price moves to the moment a
 * client has the update: simulator push → feed → Redis → API → socket), memory per client in the
 * API process, then GET /assets throughput against a bare route in the same run. Goal: p99 < 100 ms.
 */
import { execFileSync, fork, spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { runMigrations } from '@wh/db'
import { DeriveClient, startDeriveSimulator } from '@wh/exchange'
import { startPriceFeed } from '@wh/market'
import { freePort, startPostgres, startRedis, testEnv } from '@wh/testkit'
import autocannon from 'autocannon'
import { Redis } from 'ioredis'
import postgres from 'postgres'
import WebSocket from 'ws'

const CLIENTS = 5_000
/** clients connecting at once (the listen backlog is 4,096) */
const CONNECT_BATCH = 250
/** the ETH price moves this often: just above the feed's 250 ms throttle, so each move publishes at once */
const TICK_MS = 300
const MEASURE_SECONDS = 20
const HTTP_SECONDS = 5
const HTTP_CONNECTIONS = 32
const NEEDED_FDS = CLIENTS + 1_000
/** the clients live in their own processes (the load generator must not be what is measured) */
const CLIENT_PROCESSES = 2

/** A process may open only so many sockets: re-run under a raised limit when the soft one is low. */
function ensureFileLimit(): void {
  const soft = Number(execFileSync('bash', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim())
  if (soft >= NEEDED_FDS || process.argv.includes('--raised')) return
  console.log(`raising the open-file limit from ${soft} to ${NEEDED_FDS * 2}`)
  const r = spawnSync(
    'bash',
    [
      '-c',
      `ulimit -n ${NEEDED_FDS * 2} && exec "$0" "$@"`,
      process.execPath,
      ...process.execArgv,
      ...process.argv.slice(1),
      '--raised',
    ],
    { stdio: 'inherit' },
  )
  process.exit(r.status ?? 1)
}

const percentile = (sorted: Float64Array, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN
const fmt = (n: number, d = 1) => n.toFixed(d)

interface Stats {
  rss: number
  heapUsed: number
  external: number
  clients: number
  dropped: number
  received: number
  cpu: { user: number; system: number }
}

async function main() {
  ensureFileLimit()
  const pg = await startPostgres({ durable: true })
  const redisServer = await startRedis()
  const admin = postgres(pg.url, { max: 2, onnotice: () => {} })
  await admin`create database bench_ws`
  await admin.end()
  const dbUrl = pg.url.replace(/\/postgres$/, '/bench_ws')
  await runMigrations(dbUrl)

  // the exchange and the feed (in this process: the worker's code, on the simulator's clock)
  const sim = await startDeriveSimulator({ chainId: 901, startMs: Date.now() })
  const env = testEnv({
    DATABASE_URL: dbUrl,
    CACHE_URL: redisServer.url,
    PORT: String(await freePort()),
    NODE_ENV: 'production',
    EXCHANGE_HTTP_URL: sim.httpUrl,
    EXCHANGE_WS_URL: sim.wsUrl,
  })
  const feedRedis = new Redis(redisServer.url)
  const feedSql = postgres(dbUrl, { max: 4, onnotice: () => {} })
  const exchange = new DeriveClient({
    httpUrl: sim.httpUrl,
    wsUrl: sim.wsUrl,
    wallet: env.EXCHANGE_WALLET_ADDRESS as `0x${string}`,
    sessionKey: env.SESSION_PRIVATE_KEY as `0x${string}`,
    chainId: 901,
  })
  const feed = startPriceFeed({
    exchange,
    redis: feedRedis,
    sql: feedSql,
    log: { info() {}, warn: (o, m) => console.warn(m, o) },
    now: () => sim.control.nowMs(),
  })
  while (!feed.holding || !(await feedRedis.get('{market}:latest:ETH'))) await new Promise((r) => setTimeout(r, 20))

  const server = fork(fileURLToPath(new URL('./ws-server.ts', import.meta.url)), {
    execArgv: ['--import', 'tsx', '--expose-gc'],
    env: env as NodeJS.ProcessEnv,
    stdio: 'inherit',
  })
  await new Promise((r) => server.once('message', r))
  const stats = () =>
    new Promise<Stats>((resolve) => {
      server.once('message', (m) => resolve(m as Stats))
      server.send('stats')
    })
  const base = `http://127.0.0.1:${env.PORT}`
  const before = await stats()

  // --- 5,000 clients, in CLIENT_PROCESSES processes of their own ------------------------------
  const perProcess = Math.ceil(CLIENTS / CLIENT_PROCESSES)
  const loaders = Array.from({ length: CLIENT_PROCESSES }, () =>
    fork(fileURLToPath(import.meta.url), ['--clients'], {
      execArgv: ['--import', 'tsx'],
      env: { ...process.env, WS_URL: `${base.replace('http', 'ws')}/ws/prices`, WS_CLIENTS: String(perProcess) },
      stdio: 'inherit',
    }),
  )
  const ask = <T>(child: (typeof loaders)[number], msg: string) =>
    new Promise<T>((resolve) => {
      child.once('message', (m) => resolve(m as T))
      child.send(msg)
    })
  const t0 = performance.now()
  await Promise.all(loaders.map((l) => ask(l, 'connect')))
  console.log(`${CLIENTS} clients connected in ${fmt((performance.now() - t0) / 1000)} s`)
  await new Promise((r) => setTimeout(r, 1_000))
  const connected = await stats()

  // --- updates at the feed's rate --------------------------------------------------------------
  await Promise.all(loaders.map((l) => ask(l, 'measure')))
  const cpu0 = connected.cpu
  let price = 3000
  const timer = setInterval(() => {
    price += 1
    // the simulator's clock is the wall clock at each move: an update's `ts` is when the price moved
    sim.control.advanceTo(Date.now())
    sim.control.setPrice('ETH', String(price))
  }, TICK_MS)
  await new Promise((r) => setTimeout(r, MEASURE_SECONDS * 1000))
  clearInterval(timer)
  await new Promise((r) => setTimeout(r, 500))
  const results = await Promise.all(
    loaders.map((l) =>
      ask<{
        latencies: number[]
        fanout: number[]
        messages: number
        closed: number
        cpu: { user: number; system: number }
      }>(l, 'stop'),
    ),
  )
  const after = await stats()
  const all = results.flatMap((r) => r.latencies)
  const samples = all.length
  const sorted = Float64Array.from(all).sort()
  const fanoutSorted = Float64Array.from(results.flatMap((r) => r.fanout)).sort()
  const loadCpuS = results.reduce((n, r) => n + (r.cpu.user + r.cpu.system) / 1e6, 0)
  const delivered = results.reduce((n, r) => n + r.messages, 0)
  const closedEarly = results.reduce((n, r) => n + r.closed, 0)
  const apiCpuS = (after.cpu.user + after.cpu.system - cpu0.user - cpu0.system) / 1e6
  const perClientBytes = (connected.rss - before.rss) / CLIENTS
  const perClientHeap = (connected.heapUsed + connected.external - before.heapUsed - before.external) / CLIENTS

  for (const l of loaders) l.kill('SIGINT')
  await new Promise((r) => setTimeout(r, 1_000))

  // --- GET /assets against a bare route ------------------------------------------------------------
  const run = (path: string) =>
    autocannon({ url: `${base}${path}`, connections: HTTP_CONNECTIONS, duration: HTTP_SECONDS, pipelining: 1 })
  await run('/bench/bare') // warm-up
  const bare = await run('/bench/bare')
  const assets = await run('/assets')
  const strategies = await run('/ETH/strategies')

  console.log('\n=== /ws/prices: 5,000 clients, updates at the feed rate ===')
  console.log(
    JSON.stringify(
      {
        clients: CLIENTS,
        clientsOpenAtEnd: after.clients,
        droppedAsSlow: after.dropped,
        closedDuringRun: closedEarly,
        priceMovesPerSecond: fmt(1000 / TICK_MS, 2),
        updatesFromRedisPerSecond: fmt((after.received - connected.received) / MEASURE_SECONDS),
        messagesDeliveredPerSecond: Math.round(delivered / MEASURE_SECONDS),
        latencySamples: samples,
        // feed publish → client: Redis pub/sub, the API's fan-out, the socket (what the API controls)
        deliveryLatencyMs: {
          p50: fmt(percentile(fanoutSorted, 0.5)),
          p90: fmt(percentile(fanoutSorted, 0.9)),
          p99: fmt(percentile(fanoutSorted, 0.99)),
          max: fmt(fanoutSorted[fanoutSorted.length - 1] ?? Number.NaN),
        },
        goalDeliveryP99Under100Ms: percentile(fanoutSorted, 0.99) < 100,
        // price move → client: adds the simulator push, the feed, and its 250 ms throttle window
        priceMoveToClientMs: {
          p50: fmt(percentile(sorted, 0.5)),
          p90: fmt(percentile(sorted, 0.9)),
          p99: fmt(percentile(sorted, 0.99)),
          max: fmt(sorted[sorted.length - 1] ?? Number.NaN),
        },
        loadGeneratorCpuSecondsPerSecond: fmt(loadCpuS / MEASURE_SECONDS, 2),
        apiCpuShare: fmt(apiCpuS / MEASURE_SECONDS, 2),
        memoryPerClientKiB: { rss: fmt(perClientBytes / 1024), heapAndBuffers: fmt(perClientHeap / 1024) },
        apiRssMiB: {
          before: fmt(before.rss / 2 ** 20),
          with5000: fmt(connected.rss / 2 ** 20),
          afterRun: fmt(after.rss / 2 ** 20),
        },
      },
      null,
      2,
    ),
  )
  console.log('\n=== GET /assets and GET /ETH/strategies vs a bare route (same process, same run) ===')
  console.log(
    JSON.stringify(
      {
        bare: { reqPerSec: Math.round(bare.requests.average), p99Ms: bare.latency.p99, non2xx: bare.non2xx },
        assets: { reqPerSec: Math.round(assets.requests.average), p99Ms: assets.latency.p99, non2xx: assets.non2xx },
        assetsShareOfBare: fmt(assets.requests.average / bare.requests.average, 2),
        strategies: {
          reqPerSec: Math.round(strategies.requests.average),
          p99Ms: strategies.latency.p99,
          non2xx: strategies.non2xx,
        },
        strategiesShareOfBare: fmt(strategies.requests.average / bare.requests.average, 2),
      },
      null,
      2,
    ),
  )

  server.kill('SIGINT')
  await feed.close()
  feedRedis.disconnect()
  await feedSql.end()
  await sim.close()
  await redisServer.stop()
  await pg.stop()
  process.exit(0)
}

/**
 * A load process: WS_CLIENTS sockets to WS_URL. One latency sample per ETH update and socket: the
 * arrival time against the update's `ts` (when the simulator's price moved; same machine clock).
 */
async function clients() {
  const url = process.env.WS_URL as string
  const count = Number(process.env.WS_CLIENTS)
  const TS = /"asset":"ETH","seq":\d+,"ts":"([^"]+)","publishedAt":"([^"]+)","index":"([0-9.]+)"/
  const latencies: number[] = []
  const fanout: number[] = []
  let measuring = false
  let messages = 0
  let closed = 0
  let cpuAtStart = process.cpuUsage()
  const sockets: WebSocket[] = []
  const connectOne = () =>
    new Promise<void>((resolve, reject) => {
      const ws = new WebSocket(url, { perMessageDeflate: false })
      let lastIndex = ''
      ws.on('message', (data) => {
        if (!measuring) return
        messages++
        const m = TS.exec(String(data))
        // the trailing update of a throttle window repeats the index: one sample per price move
        if (!m || m[3] === lastIndex) return
        lastIndex = m[3] as string
        const now = Date.now()
        latencies.push(now - Date.parse(m[1] as string))
        fanout.push(now - Date.parse(m[2] as string))
      })
      ws.on('close', () => {
        if (measuring) closed++
      })
      ws.once('open', () => resolve())
      ws.once('error', reject)
      sockets.push(ws)
    })
  process.on('message', async (msg) => {
    if (msg === 'connect') {
      for (let i = 0; i < count; i += CONNECT_BATCH)
        await Promise.all(Array.from({ length: Math.min(CONNECT_BATCH, count - i) }, connectOne))
      process.send?.('connected')
    } else if (msg === 'measure') {
      cpuAtStart = process.cpuUsage()
      measuring = true
      process.send?.('measuring')
    } else if (msg === 'stop') {
      measuring = false
      process.send?.({ latencies, fanout, messages, closed, cpu: process.cpuUsage(cpuAtStart) })
    }
  })
  process.on('SIGINT', () => {
    for (const ws of sockets) ws.terminate()
    process.exit(0)
  })
}

if (process.argv.includes('--clients')) await clients()
else await main()
