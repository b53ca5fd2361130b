/**
 * `pnpm bench` (api): WS /ws/account fan-out. The real API in its own process (bench/server.ts) on
 * real Postgres (fsync on: each event is a commit) and Redis; USERS users each connected by one
 * socket (token in the first message), subscribed from a snapshot. Two loads write deposits rows,
 * so migration 0021's trigger makes each an event, its NOTIFY wakes the API, which reads the user's
 * new events and sends them:
 *
 * 1. single-event transactions: WRITERS concurrent writers, each inserting one row per commit for
 *    a random user of its own share, for SECONDS seconds (the usual shape: one change, one commit);
 * 2. bursts: one transaction with one row for every user (USERS events, one commit), BURSTS times.
 *
 * Reports events committed/s and delivered/s, delivery latency p50/p99 (the event's `at`, written
 * at its commit, to the client's receipt, on one machine's clock), the API's CPU per event, and
 * checks every socket saw its user's events in seq order without a gap. Environment:
 * WS_ACCOUNT_USERS (default 1,000), WS_ACCOUNT_SECONDS (default 10).
 */
import { type ChildProcess, fork } from 'node:child_process'
import { createHmac, randomUUID } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { runMigrations } from '@wh/db'
import { freePort, startPostgres, startRedis, testEnv } from '@wh/testkit'
import postgres from 'postgres'
import WebSocket from 'ws'

const USERS = Number(process.env.WS_ACCOUNT_USERS ?? 1_000)
const SECONDS = Number(process.env.WS_ACCOUNT_SECONDS ?? 10)
const WRITERS = 8
const BURSTS = 10
const CONNECT_BATCH = 200

const b64url = (s: string | Buffer) => Buffer.from(s).toString('base64url')
/** An HS256 token as POST /auth/verify issues it (sign-in is not what is measured). */
function token(secret: string, sub: string): string {
  const now = Math.floor(Date.now() / 1000)
  const body = `${b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${b64url(JSON.stringify({ sub, iat: now, exp: now + 3600 }))}`
  return `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`
}

interface Conn {
  readonly userId: string
  lastSeq: number
  gaps: number
  received: number
}

const latencies: number[] = []
let measuring = false

async function connectUser(url: string, secret: string, userId: string): Promise<Conn> {
  const ws = new WebSocket(url)
  const c: Conn = { userId, lastSeq: -1, gaps: 0, received: 0 }
  await new Promise<void>((resolve, reject) => {
    ws.once('error', reject)
    ws.on('message', (data) => {
      const m = JSON.parse(String(data)) as { type: string; seq: number; at: string }
      if (m.type === 'snapshot') {
        c.lastSeq = m.seq
        resolve()
      } else if (m.type === 'event') {
        if (m.seq !== c.lastSeq + 1) c.gaps++
        c.lastSeq = m.seq
        c.received++
        if (measuring) latencies.push(Date.now() - Date.parse(m.at))
      }
    })
    ws.once('open', () => {
      ws.send(JSON.stringify({ type: 'auth', token: token(secret, userId) }))
      ws.send(JSON.stringify({ type: 'subscribe' }))
    })
  })
  return c
}

const cpuOf = (child: ChildProcess) =>
  new Promise<number>((resolve) => {
    child.once('message', (m: { cpu: { user: number; system: number } }) => resolve((m.cpu.user + m.cpu.system) / 1e6))
    child.send('cpu')
  })

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? Number.NaN
}

async function waitDelivered(conns: Conn[], total: number, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (conns.reduce((n, c) => n + c.received, 0) < total) {
    if (Date.now() > deadline) throw new Error('events not delivered in time')
    await new Promise((r) => setTimeout(r, 20))
  }
}

const insertDeposits = (sql: postgres.Sql | postgres.TransactionSql, users: string[]) =>
  sql`insert into deposits ${sql(
    users.map((u) => ({
      chain: 'base',
      tx_hash: `0x${randomUUID().replaceAll('-', '')}${'0'.repeat(32)}`,
      log_index: 0,
      block_number: 1,
      user_id: u,
      hd_index: 0,
      address: '0x52908400098527886E0F7030069857D2E4169EE7',
      token: 'USDC',
      amount: '1000000',
      state: 'detected',
    })),
  )}`

/** Phase 1: WRITERS writers, one event per commit, each on its own share of the users. */
async function singleEvents(sql: postgres.Sql, users: string[]): Promise<number> {
  let written = 0
  const end = Date.now() + SECONDS * 1000
  await Promise.all(
    Array.from({ length: WRITERS }, async (_, w) => {
      const mine = users.filter((_, i) => i % WRITERS === w)
      while (Date.now() < end) {
        await insertDeposits(sql, [mine[Math.floor(Math.random() * mine.length)] as string])
        written++
      }
    }),
  )
  return written
}

function report(label: string, events: number, seconds: number, cpu: number) {
  console.log(
    `${label}: ${events} events, committed+delivered ${(events / seconds).toFixed(0)}/s; latency p50 ${pct(latencies, 0.5)} ms, ` +
      `p99 ${pct(latencies, 0.99)} ms, max ${pct(latencies, 1)} ms; API CPU ${((cpu * 1e6) / events).toFixed(0)} µs/event`,
  )
  latencies.length = 0
}

async function main() {
  const pg = await startPostgres({ durable: true })
  const redis = await startRedis()
  const port = await freePort()
  const admin = postgres(pg.url, { max: 1, onnotice: () => {} })
  await admin`create database bench`
  await admin.end()
  const dbUrl = pg.url.replace(/\/postgres$/, '/bench')
  await runMigrations(dbUrl)
  const sql = postgres(dbUrl, { max: WRITERS + 2, onnotice: () => {} })
  const env = testEnv({ DATABASE_URL: dbUrl, CACHE_URL: redis.url, PORT: String(port), NODE_ENV: 'production' })
  const api = fork(fileURLToPath(new URL('./server.ts', import.meta.url)), {
    execArgv: ['--import', 'tsx'],
    env: env as NodeJS.ProcessEnv,
    stdio: 'inherit',
  })
  try {
    await new Promise((r) => api.once('message', r))
    const url = `ws://127.0.0.1:${port}/ws/account`
    const users = Array.from({ length: USERS }, () => randomUUID())
    const conns: Conn[] = []
    for (let i = 0; i < users.length; i += CONNECT_BATCH)
      conns.push(
        ...(await Promise.all(
          users.slice(i, i + CONNECT_BATCH).map((u) => connectUser(url, env.JWT_SECRET as string, u)),
        )),
      )
    console.log(
      `${USERS} users connected and subscribed; ${WRITERS} writers for ${SECONDS} s, then ${BURSTS} bursts of ${USERS}`,
    )

    measuring = true
    let cpu0 = await cpuOf(api)
    let t0 = performance.now()
    const written = await singleEvents(sql, users)
    await waitDelivered(conns, written)
    report('single-event commits', written, (performance.now() - t0) / 1000, (await cpuOf(api)) - cpu0)

    const before = conns.reduce((n, c) => n + c.received, 0)
    cpu0 = await cpuOf(api)
    t0 = performance.now()
    for (let b = 0; b < BURSTS; b++) await insertDeposits(sql, users)
    await waitDelivered(conns, before + BURSTS * USERS)
    report(
      `bursts (${USERS} users per commit)`,
      BURSTS * USERS,
      (performance.now() - t0) / 1000,
      (await cpuOf(api)) - cpu0,
    )

    const gaps = conns.reduce((n, c) => n + c.gaps, 0)
    console.log(`gaps or repeats seen by clients: ${gaps} (must be 0)`)
    if (gaps > 0) process.exitCode = 1
    await sql.end()
  } finally {
    api.kill('SIGINT')
    await pg.stop()
    await redis.stop()
  }
  process.exit()
}

await main()
