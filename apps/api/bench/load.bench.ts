/**
 * `pnpm bench` (api): the combined load run. One real API process, `src/main.ts` as it is
 * deployed (NODE_ENV=production, its own logger at info, written to /dev/null), on real Postgres
 * (fsync on) and Redis; every chain's RPC is a real anvil (the network-fee estimates of
 * GET /:asset/fees), and prices come from the worker's feed (@wh/market) on the Derive simulator's v3 API,
 * the ETH price moving every 500 ms. For LOAD_SECONDS, all at once:
 *
 * - sign-ins: GET /auth/nonce, then POST /auth/verify of a SIWE message (built by the `siwe`
 *   library) with that nonce, signed by one of KEYS test keys in turn (real signatures);
 * - GET /deposit-address with the bearer tokens of TOKEN_USERS users signed in beforehand;
 * - public market data: GET /assets, /ETH/chart (300 hourly candles seeded, plus what the feed
 *   writes), /ETH/strategies, /ETH/fees.
 *
 * The load comes from autocannon in a process of its own (keep-alive connections, one request in
 * flight each). Per route class: requests/s, p50/p99 latency, non-2xx and socket errors; sign-ins
 * also per step. The API's CPU, RSS and heap come from its own GET /metrics (prom-client's
 * process metrics) before and after the run, its peak RSS from /proc. The machine has 2 cores,
 * shared by the API, Postgres, Redis, the feed and the load generator: check `machine busy`.
 */
import { fork, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { loadavg } from 'node:os'
import { fileURLToPath } from 'node:url'
import { runMigrations } from '@wh/db'
import { startDeriveSimulator } from '@wh/derive-simulator'
import { DeriveClient } from '@wh/exchange'
import { bucketStartMs, type Candle, startPriceFeed, upsertCandles } from '@wh/market'
import { apiProcessEnv, freePort, startChain, startPostgres, startRedis, testEnv } from '@wh/testkit'
import autocannon from 'autocannon'
import { Redis } from 'ioredis'
import postgres from 'postgres'
import { SiweMessage } from 'siwe'
import { privateKeyToAccount } from 'viem/accounts'
import { hashPersonalMessage } from '../src/lib/recover'

const LOAD_SECONDS = Number(process.env.LOAD_SECONDS ?? 25)
/** API_PROCESSES of the API under load (LOAD_API_PROCESSES=2: a cluster of two, src/cluster.ts) */
const API_PROCESSES = Number(process.env.LOAD_API_PROCESSES ?? 1)
const WARM_UP_SECONDS = 3
/** distinct wallets signing in during the run (the first sign-in of each registers a user) */
const KEYS = 2_000
/** users whose tokens read GET /deposit-address */
const TOKEN_USERS = 500
const DOMAIN = 'bench.example'
const ADMIN_PASSWORD = 'load-bench-admin-password'
const E18 = 10n ** 18n
const HOUR_MS = 3_600_000

/**
 * route class → path(s) and keep-alive connections (32 in all, as the other API benches, plus 4 on
 * a bare JSON route: the yardstick the public market data is compared with)
 */
const CLASSES = [
  { name: 'sign-in (nonce + verify)', key: 'signin', connections: 8 },
  { name: 'GET /deposit-address', key: 'deposit', connections: 8, path: '/deposit-address' },
  { name: 'GET /assets', key: 'assets', connections: 4, path: '/assets' },
  { name: 'GET /ETH/chart', key: 'chart', connections: 4, path: '/ETH/chart' },
  { name: 'GET /ETH/strategies', key: 'strategies', connections: 4, path: '/ETH/strategies' },
  { name: 'GET /ETH/fees', key: 'fees', connections: 4, path: '/ETH/fees' },
  { name: 'GET /health/live (bare)', key: 'bare', connections: 4, path: '/health/live' },
] as const

interface LoadPlan {
  base: string
  seconds: number
  keys: string[]
  tokens: string[]
}

interface ClassResult {
  key: string
  requests: number
  seconds: number
  p50: number
  p99: number
  max: number
  non2xx: number
  errors: number
  timeouts: number
  /** sign-in only: per step, from the load generator's own timing of each response */
  steps?: Record<'nonce' | 'verify', { count: number; p50: number; p99: number; failed: number }>
}

interface LoadResult {
  classes: ClassResult[]
  cpuSeconds: number
}

const percentile = (sorted: Float64Array, p: number) =>
  sorted.length === 0 ? Number.NaN : (sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN)

/** CPU seconds the whole machine spent busy so far (/proc/stat: every state but idle and iowait) */
function machineBusySeconds(): number {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]?.split(/\s+/).slice(1).map(Number) ?? []
  return (cpu.reduce((a, b) => a + b, 0) - (cpu[3] ?? 0) - (cpu[4] ?? 0)) / 100 // USER_HZ
}

/** CPU seconds used so far by this process and all its descendants (the API, the load generator, Postgres, Redis, anvil). */
function treeCpuSeconds(root: number): number {
  const procs = new Map<number, { ppid: number; cpu: number }>()
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    try {
      // fields after the command's closing parenthesis: state ppid … utime(12) stime(13)
      const f = readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
      procs.set(Number(d), { ppid: Number(f[1]), cpu: (Number(f[11]) + Number(f[12])) / 100 })
    } catch {}
  }
  let total = 0
  for (const [pid, p] of procs) {
    for (let at: number | undefined = pid, hops = 0; at !== undefined && at > 1 && hops < 64; hops++) {
      if (at === root) {
        total += p.cpu
        break
      }
      at = procs.get(at)?.ppid
    }
  }
  return total
}

/** VmHWM (peak RSS) of a process, bytes */
function peakRss(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return Number(m?.[1] ?? Number.NaN) * 1024
}

/** The API's own figures: prom-client's process metrics and the per-route request counter. */
async function scrape(base: string) {
  const res = await fetch(`${base}/metrics`, {
    headers: { authorization: `Basic ${Buffer.from(`admin:${ADMIN_PASSWORD}`).toString('base64')}` },
  })
  if (!res.ok) throw new Error(`GET /metrics: ${res.status}`)
  const text = await res.text()
  const one = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? ([\\d.e+-]+)$`, 'm').exec(text)?.[1])
  const byStatus: Record<string, number> = {}
  for (const m of text.matchAll(/^wh_http_requests_total\{([^}]*)\} (\d+)$/gm)) {
    const status = /status_code="(\d+)"/.exec(m[1] ?? '')?.[1] ?? '?'
    const route = /route="([^"]*)"/.exec(m[1] ?? '')?.[1] ?? '?'
    if (route === '/metrics') continue
    byStatus[status] = (byStatus[status] ?? 0) + Number(m[2])
  }
  return {
    cpuSeconds: one('process_cpu_seconds_total'),
    rss: one('process_resident_memory_bytes'),
    heapUsed: one('nodejs_heap_size_used_bytes'),
    heapTotal: one('nodejs_heap_size_total_bytes'),
    external: one('nodejs_external_memory_bytes'),
    byStatus,
  }
}

/** 300 hourly and 25 hours of 1-minute ETH candles ending now: a chart and a 24 h change to read. */
function seededCandles(nowMs: number): Candle[] {
  const out: Candle[] = []
  const candle = (interval: '1h' | '1m', startMs: number, i: number): Candle => {
    const close = (3000n + BigInt(i % 50)) * E18
    return {
      asset: 'ETH',
      interval,
      bucketStartMs: startMs,
      openE18: close - E18,
      highE18: close + 5n * E18,
      lowE18: close - 5n * E18,
      closeE18: close,
      tickCount: 60,
      firstTickMs: startMs,
      lastTickMs: startMs + 1,
    }
  }
  const hour = bucketStartMs(nowMs, '1h')
  for (let i = 1; i <= 300; i++) out.push(candle('1h', hour - i * HOUR_MS, i))
  const minute = bucketStartMs(nowMs, '1m')
  for (let i = 1; i <= 25 * 60; i++) out.push(candle('1m', minute - i * 60_000, i))
  return out
}

async function main() {
  // LOAD_PG_DURABLE=0: fsync off, to see what the commits cost (the figures in the docs are with it on)
  const pg = await startPostgres({ durable: process.env.LOAD_PG_DURABLE !== '0' })
  const redisServer = await startRedis()
  const chain = await startChain({ chainId: 901 })
  // production checks each RPC answers its chain's id at start: a node per public chain id
  const publicChains = await Promise.all([1, 10, 8453, 42161].map((chainId) => startChain({ chainId })))
  const admin = postgres(pg.url, { max: 2, onnotice: () => {} })
  await admin`create database bench_load`
  await admin.end()
  const dbUrl = pg.url.replace(/\/postgres$/, '/bench_load')
  await runMigrations(dbUrl)
  const sql = postgres(dbUrl, { max: 4, onnotice: () => {} })
  await upsertCandles(sql, seededCandles(Date.now()))

  // the exchange and the worker's feed, in this process, on the simulator's clock
  const sim = await startDeriveSimulator({ chainId: 901, startMs: Date.now() })
  const port = await freePort()
  const env = testEnv({
    NODE_ENV: 'production',
    LOG_LEVEL: process.env.LOAD_LOG_LEVEL ?? 'info',
    WH_ENV_FILE: 'none',
    DATABASE_URL: dbUrl,
    CACHE_URL: redisServer.url,
    PORT: String(port),
    SIWE_DOMAIN: DOMAIN,
    AUTH_RATE_LIMIT_PER_MINUTE: '100000000',
    ADMIN_PASSWORD,
    API_PROCESSES: String(API_PROCESSES),
    EXCHANGE_HTTP_URL: sim.v3HttpUrl,
    EXCHANGE_WS_URL: sim.v3WsUrl,
    EXCHANGE_CHAIN_RPC_URL: chain.rpcUrl,
    RPC_URL_ETHEREUM: publicChains[0]?.rpcUrl,
    RPC_URL_OPTIMISM: publicChains[1]?.rpcUrl,
    RPC_URL_BASE: publicChains[2]?.rpcUrl,
    RPC_URL_ARBITRUM: publicChains[3]?.rpcUrl,
  })
  const feedRedis = new Redis(redisServer.url)
  const feed = startPriceFeed({
    exchange: new DeriveClient({
      httpUrl: sim.v3HttpUrl,
      wsUrl: sim.v3WsUrl,
      wallet: env.EXCHANGE_WALLET_ADDRESS as `0x${string}`,
      sessionKey: env.SESSION_PRIVATE_KEY as `0x${string}`,
      chainId: 901,
    }),
    redis: feedRedis,
    sql,
    log: { info() {}, warn: (o, m) => console.warn(m, o) },
    now: () => sim.control.nowMs(),
  })
  let price = 3000
  const mover = setInterval(() => {
    price += Math.random() < 0.5 ? -1 : 1
    sim.control.advanceTo(Date.now())
    sim.control.setPrice('ETH', String(price))
  }, 500)
  const feedDeadline = Date.now() + 30_000
  while (!feed.holding || !(await feedRedis.get('{market}:latest:ETH'))) {
    if (Date.now() > feedDeadline) throw new Error('the price feed published nothing in 30 s')
    await new Promise((r) => setTimeout(r, 50))
  }

  // the API exactly as deployed: src/main.ts
  // (plus load-gc.ts: a full GC on request, for the live-heap figures)
  const api = spawn(
    process.execPath,
    [
      '--expose-gc',
      '--import',
      'tsx',
      '--import',
      fileURLToPath(new URL('./load-gc.ts', import.meta.url)),
      fileURLToPath(new URL('../src/main.ts', import.meta.url)),
    ],
    // the API's variables only: in production it refuses to hold a key
    {
      env: { PATH: process.env.PATH, WH_ENV_FILE: 'none', ...apiProcessEnv(env) } as NodeJS.ProcessEnv,
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    },
  )
  const collect = () =>
    new Promise<void>((resolve) => {
      api.once('message', () => resolve())
      api.send('gc')
    })
  const base = `http://127.0.0.1:${port}`
  const apiDeadline = Date.now() + 60_000
  for (;;) {
    if (api.exitCode !== null) throw new Error(`the API exited (${api.exitCode})`)
    if (Date.now() > apiDeadline) throw new Error('the API did not answer /health/live within 60 s')
    const up = await fetch(`${base}/health/live`).then(
      (r) => r.ok,
      () => false,
    )
    if (up) break
    await new Promise((r) => setTimeout(r, 100))
  }

  // test keys; TOKEN_USERS of them signed in now (real sign-ins) for the deposit-address reads
  const keys = Array.from({ length: KEYS }, () => `0x${randomBytes(32).toString('hex')}`)
  const tokens: string[] = []
  for (const key of keys.slice(0, TOKEN_USERS)) {
    const account = privateKeyToAccount(key as `0x${string}`)
    const { nonce } = (await (await fetch(`${base}/auth/nonce`)).json()) as { nonce: string }
    const message = siweMessage(account.address, nonce)
    const res = await fetch(`${base}/auth/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message, signature: await account.signMessage({ message }) }),
    })
    if (res.status !== 200) throw new Error(`sign-in before the run: ${res.status} ${await res.text()}`)
    tokens.push(((await res.json()) as { token: string }).token)
  }

  const loader = fork(fileURLToPath(import.meta.url), ['--load'], {
    execArgv: ['--import', 'tsx'],
    stdio: 'inherit',
  })
  const run = (seconds: number) =>
    new Promise<LoadResult>((resolve, reject) => {
      loader.once('message', (m) => resolve(m as LoadResult))
      loader.once('exit', (code) => reject(new Error(`the load generator exited (${code})`)))
      loader.send({ base, seconds, keys, tokens } satisfies LoadPlan)
    })
  console.log(`warm-up ${WARM_UP_SECONDS} s, then ${LOAD_SECONDS} s of combined load on ${base}`)
  await run(WARM_UP_SECONDS)
  await collect()
  const before = await scrape(base)
  const users0 = (await sql<{ n: number }[]>`select count(*)::int as n from users`)[0]?.n ?? 0
  const busy0 = machineBusySeconds()
  const tree0 = treeCpuSeconds(process.pid)
  const t0 = performance.now()
  const load = await run(LOAD_SECONDS)
  const wallSeconds = (performance.now() - t0) / 1000
  const busySeconds = machineBusySeconds() - busy0
  const treeSeconds = treeCpuSeconds(process.pid) - tree0
  const afterLoad = await scrape(base)
  await collect()
  const after = { ...(await scrape(base)), cpuSeconds: afterLoad.cpuSeconds, byStatus: afterLoad.byStatus }
  const peak = api.pid ? peakRss(api.pid) : Number.NaN
  const users = (await sql<{ n: number }[]>`select count(*)::int as n from users`)[0]?.n ?? 0
  loader.kill('SIGINT')

  const mib = (b: number) => `${(b / 2 ** 20).toFixed(0)} MiB`
  const f = (n: number, d = 0) => (Number.isFinite(n) ? n.toFixed(d) : '-')
  const row = (cells: string[], widths: number[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ')
  const widths = [26, 5, 9, 8, 8, 9, 7]
  console.log(
    `\n=== combined load: ${LOAD_SECONDS} s, ${API_PROCESSES === 1 ? 'one API process' : `${API_PROCESSES} API processes (a cluster; CPU and heap summed over them, peak RSS the primary's)`} (src/main.ts, NODE_ENV=production), 2 shared cores ===`,
  )
  console.log(row(['route class', 'conns', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx', 'errors'], widths))
  let total = 0
  for (const c of CLASSES) {
    const r = load.classes.find((x) => x.key === c.key) as ClassResult
    total += r.requests
    console.log(
      row(
        [
          c.name,
          String(c.connections),
          f(r.requests / r.seconds),
          f(r.p50, 1),
          f(r.p99, 1),
          String(r.non2xx),
          String(r.errors + r.timeouts),
        ],
        widths,
      ),
    )
    if (r.steps)
      for (const [step, s] of Object.entries(r.steps))
        console.log(
          row(
            [
              `  ${step === 'nonce' ? 'GET /auth/nonce' : 'POST /auth/verify'}`,
              '',
              f(s.count / r.seconds),
              f(s.p50, 1),
              f(s.p99, 1),
              String(s.failed),
              '',
            ],
            widths,
          ),
        )
  }
  console.log(row(['all', '32', f(total / LOAD_SECONDS), '', '', '', ''], widths))
  const signin = load.classes.find((x) => x.key === 'signin')
  const served = Object.entries(after.byStatus).map(([s, n]) => [s, n - (before.byStatus[s] ?? 0)] as const)
  console.log(
    `\n  sign-ins completed              ${f((signin?.steps?.verify.count ?? 0) / (signin?.seconds ?? 1))} /s`,
  )
  console.log(`  users registered during the run ${users - users0} (of ${KEYS} wallets; ${users} in all)`)
  console.log(`  answered by the API (its own counter, by status): ${served.map(([s, n]) => `${s}: ${n}`).join(', ')}`)
  console.log(
    `  API CPU                         ${f((after.cpuSeconds - before.cpuSeconds) / wallSeconds, 2)} cores, ` +
      `${f(((after.cpuSeconds - before.cpuSeconds) * 1e6) / Math.max(1, total), 0)} µs per request of the mix` +
      `   load generator ${f(load.cpuSeconds / wallSeconds, 2)} cores` +
      `   machine busy ${f(busySeconds / wallSeconds, 2)} of 2 cores`,
  )
  console.log(
    `  this bench's processes          ${f(treeSeconds / wallSeconds, 2)} cores (API, load generator, Postgres, Redis, anvil, feed)` +
      `   other work on the machine ${f((busySeconds - treeSeconds) / wallSeconds, 2)} cores   load average ${f(loadavg()[0] ?? Number.NaN, 2)}`,
  )
  console.log(
    `  API memory before the run       RSS ${mib(before.rss)}, heap live ${mib(before.heapUsed)} of ${mib(before.heapTotal)}, external ${mib(before.external)}   (after a full GC)`,
  )
  console.log(
    `  API memory at the end of the run RSS ${mib(afterLoad.rss)}, heap used ${mib(afterLoad.heapUsed)} of ${mib(afterLoad.heapTotal)}; peak RSS ${mib(peak)}`,
  )
  console.log(
    `  API memory after the run        RSS ${mib(after.rss)}, heap live ${mib(after.heapUsed)} of ${mib(after.heapTotal)}, external ${mib(after.external)}   (after a full GC)`,
  )

  clearInterval(mover)
  api.kill('SIGTERM')
  await new Promise((r) => (api.exitCode !== null ? r(null) : api.once('exit', r)))
  await feed.close()
  feedRedis.disconnect()
  await sql.end()
  await sim.close()
  await chain.stop()
  for (const c of publicChains) await c.stop()
  await redisServer.stop()
  await pg.stop()
  const failed = load.classes.reduce((n, c) => n + c.non2xx + c.errors + c.timeouts, 0)
  process.exit(failed === 0 ? 0 : 1)
}

function siweMessage(address: string, nonce: string): string {
  return new SiweMessage({
    domain: DOMAIN,
    address,
    statement: 'Sign in to Wheelhouse',
    uri: `https://${DOMAIN}`,
    version: '1',
    chainId: 1,
    nonce,
    issuedAt: new Date().toISOString(),
  }).prepareMessage()
}

/** The load generator's process: one autocannon instance per route class, all at once. */
async function loadProcess() {
  const require = createRequire(import.meta.url)
  const secp = require('secp256k1/bindings') as {
    ecdsaSign(msg32: Uint8Array, key: Uint8Array): { signature: Uint8Array; recid: number }
  }
  let wallets: { key: Buffer; address: string }[] | undefined
  process.on('message', async (plan: LoadPlan) => {
    // addresses derived once (the warm-up's message), not inside the measured run
    wallets ??= plan.keys.map((k) => ({
      key: Buffer.from(k.slice(2), 'hex'),
      address: privateKeyToAccount(k as `0x${string}`).address,
    }))
    const signers = wallets
    const cpu0 = process.cpuUsage()
    let nextWallet = 0
    let nextToken = 0
    const steps = { nonce: [] as number[], verify: [] as number[] }
    const failed = { nonce: 0, verify: 0 }
    const runs = CLASSES.map((c) => {
      const opts: autocannon.Options =
        c.key === 'signin'
          ? {
              url: plan.base,
              requests: [
                {
                  method: 'GET',
                  path: '/auth/nonce',
                  onResponse: (status, body, context) => {
                    ;(context as { nonce?: string }).nonce =
                      status === 200 ? (JSON.parse(body) as { nonce: string }).nonce : undefined
                  },
                },
                {
                  method: 'POST',
                  path: '/auth/verify',
                  headers: { 'content-type': 'application/json' },
                  setupRequest: (req, context) => {
                    const w = signers[nextWallet++ % signers.length] as (typeof signers)[number]
                    const message = siweMessage(w.address, (context as { nonce?: string }).nonce ?? 'missing-nonce')
                    const { signature, recid } = secp.ecdsaSign(hashPersonalMessage(message), w.key)
                    const sig = `0x${Buffer.from(signature).toString('hex')}${(27 + recid).toString(16)}`
                    return { ...req, body: JSON.stringify({ message, signature: sig }) }
                  },
                },
              ],
            }
          : c.key === 'deposit'
            ? {
                url: `${plan.base}${c.path}`,
                requests: [
                  {
                    method: 'GET',
                    setupRequest: (req) => ({
                      ...req,
                      headers: { authorization: `Bearer ${plan.tokens[nextToken++ % plan.tokens.length]}` },
                    }),
                  },
                ],
              }
            : { url: `${plan.base}${c.path}` }
      return new Promise<{ c: (typeof CLASSES)[number]; r: autocannon.Result }>((resolve, reject) => {
        const instance = autocannon(
          { ...opts, connections: c.connections, pipelining: 1, duration: plan.seconds },
          (err, r) => (err ? reject(err) : resolve({ c, r })),
        )
        if (c.key === 'signin')
          // which step answered: the client's current request, before it moves on to the next one
          instance.on('response', (client: unknown, status: number, _bytes: number, ms: number) => {
            const req = (client as { requestIterator: { currentRequest: { method: string } } }).requestIterator
              .currentRequest
            const step = req.method === 'GET' ? 'nonce' : 'verify'
            steps[step].push(ms)
            if (status !== 200) failed[step]++
          })
      })
    })
    const results = await Promise.all(runs)
    const sorted = (xs: number[]) => Float64Array.from(xs).sort()
    const stepStats = (k: 'nonce' | 'verify') => {
      const s = sorted(steps[k])
      return { count: s.length, p50: percentile(s, 0.5), p99: percentile(s, 0.99), failed: failed[k] }
    }
    const cpu = process.cpuUsage(cpu0)
    process.send?.({
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      classes: results.map(({ c, r }) => ({
        key: c.key,
        requests: r.requests.total,
        seconds: (Date.parse(String(r.finish)) - Date.parse(String(r.start))) / 1000,
        p50: r.latency.p50,
        p99: r.latency.p99,
        max: r.latency.max,
        non2xx: r.non2xx,
        errors: r.errors,
        timeouts: r.timeouts,
        ...(c.key === 'signin' && { steps: { nonce: stepStats('nonce'), verify: stepStats('verify') } }),
      })),
    } satisfies LoadResult)
  })
  process.on('SIGINT', () => process.exit(0))
}

if (process.argv.includes('--load')) await loadProcess()
else await main()
