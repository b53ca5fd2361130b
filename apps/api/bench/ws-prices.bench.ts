/**
 * `pnpm bench` (api): 5,000 concurrent /ws/prices clients against the real API in its own process,
 * fed by the real price feed (@wh/market, the worker's code) subscribed to the Derive simulator's v3
 * ticker channels, through real Redis pub/sub; real Postgres for candles and GET /assets.
 * Reports delivery latency p50/p90/p99 of every price message, from the feed's publish (the
 * update's `publishedAt`) to the client's receipt, on one machine's clock: Redis pub/sub → the API's
 * fan-out → the socket → the client. Goal: p99 < 100 ms. Also where that time goes (publish → the
 * API's event loop, first → last client of one update, the API's event loop), the price move →
 * client latency (adds the simulator, the feed and its 250 ms throttle), CPU of the API, the load
 * generator and the whole machine (other work on it shows up as latency: compare before trusting a
 * figure), memory per client in the API process, then GET /assets and /ETH/strategies throughput
 * against a bare route in the same run.
 */
import { execFileSync, fork, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { loadavg } from 'node:os'
import { fileURLToPath } from 'node:url'
import { runMigrations } from '@wh/db'
import { startDeriveSimulator } from '@wh/derive-simulator'
import { DeriveClient } from '@wh/exchange'
import { startPriceFeed } from '@wh/market'
import { freePort, startPostgres, startRedis, testEnv } from '@wh/testkit'
import autocannon from 'autocannon'
import { Redis } from 'ioredis'
import postgres from 'postgres'

const CLIENTS = 5_000
/** clients connecting at once (the listen backlog is 4,096) */
const CONNECT_BATCH = 250
/** the ETH price (and the simulator's clock) moves this often: the feed then publishes at its 250 ms throttle rate */
const TICK_MS = 300
const MEASURE_SECONDS = 20
const HTTP_SECONDS = 5
const HTTP_CONNECTIONS = 32
const NEEDED_FDS = CLIENTS + 1_000
/**
 * The clients live in a process of their own (the load generator must not be what is measured).
 * One is enough: it reads 40,000 messages a second with about a quarter of a core. A second one
 * cost more CPU in all (more wake-ups) on a machine of two cores that it shares with the API, and
 * its p99 was higher (115-156 ms against 88-90 ms on a quiet machine). WS_BENCH_LOADERS overrides.
 */
const CLIENT_PROCESSES = Number(process.env.WS_BENCH_LOADERS ?? 1)

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

/** CPU seconds the whole machine spent busy so far (/proc/stat: every state but idle and iowait) */
function machineBusySeconds(): number {
  try {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]?.split(/\s+/).slice(1).map(Number) ?? []
    const total = cpu.reduce((a, b) => a + b, 0)
    return (total - (cpu[3] ?? 0) - (cpu[4] ?? 0)) / 100 // USER_HZ
  } catch {
    return Number.NaN
  }
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
  batches: number
  cpu: { user: number; system: number }
  /** since the last 'measure': event-loop delay percentiles (ms), event-loop utilisation, publish → API arrival (ms) */
  loop?: { p50: number; p99: number; max: number; utilisation: number }
  redisHopMs?: { p50: number; p99: number; max: number; samples: number }
  arrivalGapsMs?: unknown
}

interface LoadResult {
  delivery: number[]
  moves: number[]
  spread: [number, [number, number]][]
  messages: number
  orderErrors: number
  closed: number
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
    EXCHANGE_HTTP_URL: sim.v3HttpUrl,
    EXCHANGE_WS_URL: sim.v3WsUrl,
  })
  const feedRedis = new Redis(redisServer.url)
  const feedSql = postgres(dbUrl, { max: 4, onnotice: () => {} })
  const exchange = new DeriveClient({
    httpUrl: sim.v3HttpUrl,
    wsUrl: sim.v3WsUrl,
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
    // WS_BENCH_CPU_PROFILE=<dir>: a V8 CPU profile of the API process (where its time goes)
    execArgv: [
      '--import',
      'tsx',
      '--expose-gc',
      ...(process.env.WS_BENCH_CPU_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.WS_BENCH_CPU_PROFILE}`] : []),
    ],
    env: env as NodeJS.ProcessEnv,
    stdio: 'inherit',
  })
  await new Promise((r) => server.once('message', r))
  const stats = (msg: 'stats' | 'measure' = 'stats') =>
    new Promise<Stats>((resolve) => {
      server.once('message', (m) => resolve(m as Stats))
      server.send(msg)
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
  const cpu0 = (await stats('measure')).cpu
  const busy0 = machineBusySeconds()
  const mainCpu0 = process.cpuUsage()
  let price = 3000
  const timer = setInterval(() => {
    price += 1
    // the simulator's clock is the wall clock at each move: an update's `ts` is when the price moved.
    // Both calls push every ticker, so the feed publishes each asset at the leading edge and again at
    // the end of its 250 ms window; a move 300 ms later often falls inside the next window and goes
    // out on its trailing edge: about 4 updates per asset and second, ETH and BTC alike
    sim.control.advanceTo(Date.now())
    sim.control.setPrice('ETH', String(price))
  }, TICK_MS)
  await new Promise((r) => setTimeout(r, MEASURE_SECONDS * 1000))
  clearInterval(timer)
  await new Promise((r) => setTimeout(r, 500))
  const busyS = machineBusySeconds() - busy0
  const mainCpu = process.cpuUsage(mainCpu0)
  const results = await Promise.all(loaders.map((l) => ask<LoadResult>(l, 'stop')))
  const after = await stats()
  const sortedOf = (xs: Iterable<number>) => Float64Array.from(xs).sort()
  const deliverySorted = sortedOf(results.flatMap((r) => r.delivery))
  const movesSorted = sortedOf(results.flatMap((r) => r.moves))
  // per message, over both load processes: its first and its last arrival
  const perMessage = new Map<number, [number, number]>()
  for (const r of results)
    for (const [k, [first, last]] of r.spread) {
      const m = perMessage.get(k)
      if (!m) perMessage.set(k, [first, last])
      else {
        m[0] = Math.min(m[0], first)
        m[1] = Math.max(m[1], last)
      }
    }
  const spreadSorted = sortedOf([...perMessage.values()].map(([first, last]) => last - first))
  const loadCpuS = results.reduce((n, r) => n + (r.cpu.user + r.cpu.system) / 1e6, 0)
  const delivered = results.reduce((n, r) => n + r.messages, 0)
  const orderErrors = results.reduce((n, r) => n + r.orderErrors, 0)
  const closedEarly = results.reduce((n, r) => n + r.closed, 0)
  const apiCpuS = (after.cpu.user + after.cpu.system - cpu0.user - cpu0.system) / 1e6
  const perClientBytes = (connected.rss - before.rss) / CLIENTS
  const perClientHeap = (connected.heapUsed + connected.external - before.heapUsed - before.external) / CLIENTS
  const pcts = (sorted: Float64Array) => ({
    p50: fmt(percentile(sorted, 0.5)),
    p90: fmt(percentile(sorted, 0.9)),
    p99: fmt(percentile(sorted, 0.99)),
    max: fmt(sorted[sorted.length - 1] ?? Number.NaN),
  })

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
        // messages the hub wrote together (one socket write per client for all of them)
        updatesPerBatch: fmt((after.received - connected.received) / (after.batches - connected.batches), 2),
        messagesDeliveredPerSecond: Math.round(delivered / MEASURE_SECONDS),
        sequenceErrors: orderErrors,
        latencySamples: deliverySorted.length,
        // feed publish (`publishedAt`) → client, every price message: Redis pub/sub, the API's fan-out, the socket
        deliveryLatencyMs: pcts(deliverySorted),
        goalDeliveryP99Under100Ms: percentile(deliverySorted, 0.99) < 100,
        // where it goes: publish → the API's event loop (its own subscriber), and first → last client of one message
        publishToApiMs: after.redisHopMs,
        // how many updates came within 1 / 5 ms of the previous one (ETH and BTC are published apart)
        arrivalGapsMs: after.arrivalGapsMs,
        firstToLastClientMs: pcts(spreadSorted),
        apiEventLoop: after.loop,
        // price move → client (ETH, first update of each move): adds the simulator push, the feed, its throttle
        priceMoveToClientMs: pcts(movesSorted),
        loadGeneratorCpuSecondsPerSecond: fmt(loadCpuS / MEASURE_SECONDS, 2),
        apiCpuShare: fmt(apiCpuS / MEASURE_SECONDS, 2),
        feedAndSimulatorCpuShare: fmt((mainCpu.user + mainCpu.system) / 1e6 / MEASURE_SECONDS, 2),
        // the whole machine (2 cores) during the measurement, and what is not this bench's Node processes
        // (Redis, Postgres, and other work on the machine): a busy machine shows up as latency
        machineBusyCores: fmt(busyS / MEASURE_SECONDS, 2),
        otherThanBenchNodeCores: fmt(
          (busyS - apiCpuS - loadCpuS - (mainCpu.user + mainCpu.system) / 1e6) / MEASURE_SECONDS,
          2,
        ),
        loadAverage1m: fmt(loadavg()[0] ?? Number.NaN, 2),
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
 * A load process: WS_CLIENTS WebSocket clients to WS_URL, each a bare TCP socket with a minimal
 * RFC 6455 client (the handshake, unmasked server frames, pong to ping). The load generator is not
 * the system under test, and in this machine it shares two cores with the API: a full client
 * library per socket (a Receiver stream, UTF-8 validation, a string and a JSON parse or regex per
 * message) showed up as delivery latency. So a message is never decoded: the sequence number and
 * the two timestamps are read from the bytes the feed writes in a fixed order
 * (`{"type":"price","asset":"ETH","seq":N,"ts":"…","publishedAt":"…",`).
 *
 * Per price message: delivery latency = arrival − `publishedAt` (the feed's publish; same machine
 * clock, ms resolution), and the per-(asset, seq) first and last arrival over this process's
 * clients. Per ETH price move (the first update with a new `ts`): arrival − `ts` (the move).
 * Sequence numbers are checked per client and asset: out of order or repeated counts as an error.
 */
const HANDSHAKE_END = Buffer.from('\r\n\r\n')
const PRICE_HEAD = Buffer.from('{"type":"price","asset":"')
const PUBLISHED_AT = Buffer.from('","publishedAt":"')
const PONG_EMPTY = Buffer.from([0x8a, 0x80, 0, 0, 0, 0]) // masked (key 0), as a client must

/** Epoch ms of an ISO-8601 `YYYY-MM-DDTHH:MM:SS.mmmZ` at `at`, without making a string. */
function isoMs(b: Buffer, at: number): number {
  const d = (i: number, n: number) => {
    let v = 0
    for (let k = 0; k < n; k++) v = v * 10 + ((b[at + i + k] as number) - 48)
    return v
  }
  return Date.UTC(d(0, 4), d(5, 2) - 1, d(8, 2), d(11, 2), d(14, 2), d(17, 2), d(20, 3))
}

async function clients() {
  const url = new URL(process.env.WS_URL as string)
  const count = Number(process.env.WS_CLIENTS)
  const request = Buffer.from(
    `GET ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\n` +
      'Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ',
  )
  const delivery: number[] = []
  const moves: number[] = []
  /** per message (ETH: seq, BTC: −seq): [first, last] arrival (epoch ms) in this process */
  const spread = new Map<number, [number, number]>()
  let measuring = false
  let messages = 0
  let orderErrors = 0
  let closed = 0
  let cpuAtStart = process.cpuUsage()
  const sockets: Socket[] = []

  const connectOne = () =>
    new Promise<void>((resolve, reject) => {
      const sock = connect({ host: url.hostname, port: Number(url.port), noDelay: true })
      sockets.push(sock)
      let open = false
      let pending: Buffer | undefined
      // this client's last seq and ts per asset (two assets: ETH, BTC; first letter tells them apart)
      let seqEth = 0
      let seqBtc = 0
      let lastMoveTs = 0

      const onText = (b: Buffer, at: number, end: number, now: number) => {
        if (!measuring) return
        messages++
        if (end - at < 120 || b.compare(PRICE_HEAD, 0, PRICE_HEAD.length, at, at + PRICE_HEAD.length) !== 0) return
        const assetAt = at + PRICE_HEAD.length
        const eth = b[assetAt] === 0x45 // 'E'
        let i = b.indexOf(0x22, assetAt) + 8 // after `","seq":`
        let seq = 0
        for (let c = b[i] as number; c >= 48 && c <= 57; c = b[++i] as number) seq = seq * 10 + c - 48
        const tsMs = isoMs(b, i + 7) // after `,"ts":"`
        const pubAt = i + 7 + 24
        if (b.compare(PUBLISHED_AT, 0, PUBLISHED_AT.length, pubAt, pubAt + PUBLISHED_AT.length) !== 0) return
        const publishedMs = isoMs(b, pubAt + PUBLISHED_AT.length)
        if (eth) {
          if (seq <= seqEth) orderErrors++
          seqEth = seq
          if (tsMs !== lastMoveTs) {
            lastMoveTs = tsMs
            moves.push(now - tsMs)
          }
        } else {
          if (seq <= seqBtc) orderErrors++
          seqBtc = seq
        }
        delivery.push(now - publishedMs)
        const key = eth ? seq : -seq
        const s = spread.get(key)
        if (s) s[1] = now
        else spread.set(key, [now, now])
      }

      sock.on('data', (chunk: Buffer) => {
        const now = Date.now()
        const b = pending ? Buffer.concat([pending, chunk]) : chunk
        pending = undefined
        let at = 0
        if (!open) {
          const end = b.indexOf(HANDSHAKE_END)
          if (end < 0) {
            pending = b
            return
          }
          if (b.toString('latin1', 0, 12) !== 'HTTP/1.1 101') {
            reject(new Error(b.toString('latin1', 0, end)))
            sock.destroy()
            return
          }
          open = true
          resolve()
          at = end + 4
        }
        while (at + 2 <= b.length) {
          const b0 = b[at] as number
          let len = (b[at + 1] as number) & 0x7f
          let head = 2
          if (len === 126) {
            if (at + 4 > b.length) break
            len = b.readUInt16BE(at + 2)
            head = 4
          } else if (len === 127) {
            if (at + 10 > b.length) break
            len = Number(b.readBigUInt64BE(at + 2))
            head = 10
          }
          if (at + head + len > b.length) break
          const op = b0 & 0x0f
          const start = at + head
          if (op === 0x1) onText(b, start, start + len, now)
          else if (op === 0x9) {
            // pong with the ping's payload (server pings are empty)
            if (len === 0) sock.write(PONG_EMPTY)
            else
              sock.write(Buffer.concat([Buffer.from([0x8a, 0x80 | len, 0, 0, 0, 0]), b.subarray(start, start + len)]))
          } else if (op === 0x8) sock.destroy()
          at = start + len
        }
        if (at < b.length) pending = b.subarray(at)
      })
      sock.on('close', () => {
        if (measuring) closed++
      })
      sock.once('error', reject)
      sock.once('connect', () =>
        sock.write(Buffer.concat([request, Buffer.from(`${randomBytes(16).toString('base64')}\r\n\r\n`)])),
      )
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
      process.send?.({
        delivery,
        moves,
        spread: [...spread.entries()],
        messages,
        orderErrors,
        closed,
        cpu: process.cpuUsage(cpuAtStart),
      })
    }
  })
  process.on('SIGINT', () => {
    for (const s of sockets) s.destroy()
    process.exit(0)
  })
}

if (process.argv.includes('--clients')) await clients()
else await main()
