/**
 * `pnpm bench` (api): sign-in throughput against the `siwe` library's own verify of the same
 * messages, and GET /deposit-address against a bare JWT-guarded route, in the same run.
 * Real Postgres (fsync on), real Redis, the real server in its own process, over HTTP.
 */

import { fork as _fork, type ChildProcess, execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { runMigrations } from '@wh/db'
import { freePort, startPostgres, startRedis, testEnv } from '@wh/testkit'
import autocannon from 'autocannon'
import postgres from 'postgres'
import { SiweMessage } from 'siwe'
import { privateKeyToAccount } from 'viem/accounts'
import { hashPersonalMessage } from '../src/lib/recover'

const require = createRequire(import.meta.url)
const secp = require('secp256k1/bindings') as {
  ecdsaSign(msg32: Uint8Array, key: Uint8Array): { signature: Uint8Array; recid: number }
}

const SIGN_INS = 20_000
/** sign-ins sent first and not measured: JIT warm-up, and every wallet's first sign-in (registration) */
const WARM_UP = 4_000
/** wrk runs for a duration; short enough that no pre-signed body (and nonce) is sent twice */
const WRK_SECONDS = 3
const WALLETS = 2_000
const BASELINE_SAMPLE = 400
const CONNECTIONS = 32
const READ_SECONDS = 8
const DOMAIN = 'bench.example'

function sign(message: string, key: Uint8Array): string {
  const { signature, recid } = secp.ecdsaSign(hashPersonalMessage(message), key)
  return `0x${Buffer.from(signature).toString('hex')}${(27 + recid).toString(16)}`
}

/** CPU seconds used so far by the child (user + system). */
function childCpu(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    child.once('message', (m: { cpu: { user: number; system: number } }) => resolve((m.cpu.user + m.cpu.system) / 1e6))
    child.send('cpu')
  })
}

/** wrk (C, Debian package) loads the server with less CPU than a JS load generator; optional. */
function hasWrk(): boolean {
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' })
    return true
  } catch (e) {
    // wrk prints its version and exits 1
    return (e as { status?: number }).status === 1
  }
}

const WRK_SCRIPT = `
local bodies = {}
local i = 0
init = function(args)
  for line in io.lines(args[1]) do bodies[#bodies + 1] = line end
end
request = function()
  i = i + 1
  return wrk.format("POST", "/auth/verify", { ["Content-Type"] = "application/json" }, bodies[((i - 1) % #bodies) + 1])
end
`

/** POST /auth/verify with wrk, one pre-signed body per request; seconds kept short enough that none repeats. */
async function wrkVerify(base: string, bodies: string[], seconds: number) {
  const dir = mkdtempSync(join(tmpdir(), 'wh-wrk-'))
  writeFileSync(join(dir, 'bodies.txt'), `${bodies.join('\n')}\n`)
  writeFileSync(join(dir, 'verify.lua'), WRK_SCRIPT)
  const cpu0 = apiServer ? await childCpu(apiServer) : 0
  const out = execFileSync(
    'wrk',
    [
      '-t1',
      `-c${CONNECTIONS}`,
      `-d${seconds}s`,
      '--latency',
      '-s',
      join(dir, 'verify.lua'),
      `${base}/auth/verify`,
      '--',
      join(dir, 'bodies.txt'),
    ],
    { encoding: 'utf8' },
  )
  const cpu = apiServer ? (await childCpu(apiServer)) - cpu0 : 0
  const total = Number(/(\d+) requests in/.exec(out)?.[1])
  const ms = (label: string) => {
    const m = new RegExp(`${label}%\\s+([\\d.]+)(us|ms|s)`).exec(out)
    if (!m) return Number.NaN
    const v = Number(m[1])
    return m[2] === 'us' ? v / 1000 : m[2] === 's' ? v * 1000 : v
  }
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]),
    p50: ms('50'),
    p99: ms('99'),
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0),
    apiCpuUs: (cpu * 1e6) / total,
    total,
    tool: 'wrk',
  }
}

/** CPU seconds used so far by every process whose command line contains `needle` (Linux /proc). */
function processCpu(needle: string): number {
  const ticks = 100
  let total = 0
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(needle)) continue
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
      total += (Number(fields[11]) + Number(fields[12])) / ticks
    } catch {}
  }
  return total
}

let apiServer: ChildProcess | undefined

/** Runs a load; throughput from the exact count and elapsed time, plus the API's CPU per request. */
async function load(opts: autocannon.Options) {
  const cpu0 = apiServer ? await childCpu(apiServer) : 0
  const result = await autocannon({ ...opts, connections: CONNECTIONS })
  const cpu = apiServer ? (await childCpu(apiServer)) - cpu0 : 0
  const seconds = (Date.parse(String(result.finish)) - Date.parse(String(result.start))) / 1000
  return {
    rps: result.requests.total / seconds,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    apiCpuUs: (cpu * 1e6) / result.requests.total,
    total: result.requests.total,
    tool: 'autocannon',
  }
}

async function main() {
  const pg = await startPostgres({ durable: true })
  const redis = await startRedis()
  const port = await freePort()
  const sql = postgres(pg.url, { max: 4, onnotice: () => {} })
  await sql`create database bench`
  const dbUrl = pg.url.replace(/\/postgres$/, '/bench')
  await runMigrations(dbUrl)
  const db = postgres(dbUrl, { max: 4, onnotice: () => {} })

  const env = testEnv({
    DATABASE_URL: dbUrl,
    CACHE_URL: redis.url,
    PORT: String(port),
    SIWE_DOMAIN: DOMAIN,
    AUTH_RATE_LIMIT_PER_MINUTE: '100000000',
    NODE_ENV: 'production',
  })
  const server = _fork(fileURLToPath(new URL('./server.ts', import.meta.url)), {
    execArgv: ['--import', 'tsx'],
    env: env as NodeJS.ProcessEnv,
    stdio: 'inherit',
  })
  await new Promise((r) => server.once('message', r))
  apiServer = server
  const base = `http://127.0.0.1:${port}`

  // Prepare signed messages: nonces inserted directly (issuing them is not what is measured).
  console.log(`preparing ${SIGN_INS} signed messages from ${WALLETS} wallets…`)
  const keys = Array.from({ length: WALLETS }, () => randomBytes(32))
  const addresses = keys.map((k) => privateKeyToAccount(`0x${k.toString('hex')}`).address)
  const now = new Date()
  const issuedAt = now.toISOString()
  const items = Array.from({ length: SIGN_INS }, (_, i) => {
    const nonce = randomBytes(16).toString('hex')
    const w = i % WALLETS
    const message = new SiweMessage({
      domain: DOMAIN,
      address: addresses[w],
      statement: 'Sign in to Wheelhouse',
      uri: `https://${DOMAIN}`,
      version: '1',
      chainId: 1,
      nonce,
      issuedAt,
    }).prepareMessage()
    return { nonce, message, signature: sign(message, keys[w] as Uint8Array) }
  })
  const expires = new Date(now.getTime() + 3_600_000)
  for (let i = 0; i < items.length; i += 1000) {
    const rows = items.slice(i, i + 1000).map((x) => ({ nonce: x.nonce, issued_at: now, expires_at: expires }))
    await db`insert into siwe_nonces ${db(rows)}`
  }

  // Baseline: the siwe library's own verify (parse + ethers recovery), same messages, one core.
  const t = performance.now()
  const cpu0 = process.cpuUsage()
  for (const x of items.slice(0, BASELINE_SAMPLE)) {
    await new SiweMessage(x.message).verify({ signature: x.signature, domain: DOMAIN, nonce: x.nonce })
  }
  const siweOps = BASELINE_SAMPLE / ((performance.now() - t) / 1000)
  const siweCpu = process.cpuUsage(cpu0)
  const siweCpuUs = (siweCpu.user + siweCpu.system) / BASELINE_SAMPLE
  const pgNeedle = 'postgres'

  // POST /auth/verify over HTTP, each request a different message and nonce.
  let next = 0
  const pgCpu0 = processCpu(pgNeedle)
  const useWrk = hasWrk()
  const bodies = items.map((x) => JSON.stringify({ message: x.message, signature: x.signature }))
  const verifyLoad = (amount: number): autocannon.Options => ({
    url: `${base}/auth/verify`,
    amount,
    requests: [
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        setupRequest: (req) => {
          const x = items[next++ % items.length]
          return { ...req, body: JSON.stringify({ message: x?.message, signature: x?.signature }) }
        },
      },
    ],
  })
  // the warm-up is sent and not measured with either tool: JIT, and every wallet's first sign-in
  if (useWrk) await wrkVerify(base, bodies.slice(0, WARM_UP), 1)
  else await load(verifyLoad(WARM_UP))
  const verify = useWrk
    ? await wrkVerify(base, bodies.slice(WARM_UP), WRK_SECONDS)
    : await load(verifyLoad(SIGN_INS - WARM_UP))
  const apiCpuUs = verify.apiCpuUs
  const pgCpuUs = ((processCpu(pgNeedle) - pgCpu0) * 1e6) / verify.total
  const users = (await db`select count(*)::int as n from users`)[0]?.n

  // Tokens for the read routes.
  const tokens: string[] = []
  for (let i = 0; i < 200; i++) {
    const { nonce } = (await (await fetch(`${base}/auth/nonce`)).json()) as { nonce: string }
    const key = randomBytes(32)
    const address = privateKeyToAccount(`0x${key.toString('hex')}`).address
    const message = new SiweMessage({
      domain: DOMAIN,
      address,
      uri: `https://${DOMAIN}`,
      version: '1',
      chainId: 1,
      nonce,
      issuedAt: new Date().toISOString(),
    }).prepareMessage()
    const res = await fetch(`${base}/auth/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message, signature: sign(message, key) }),
    })
    tokens.push(((await res.json()) as { token: string }).token)
  }
  const authed = (path: string): autocannon.Options => {
    let i = 0
    return {
      url: `${base}${path}`,
      duration: READ_SECONDS,
      requests: [
        {
          method: 'GET',
          setupRequest: (req) => ({ ...req, headers: { authorization: `Bearer ${tokens[i++ % tokens.length]}` } }),
        },
      ],
    }
  }
  // warm both routes (JIT, caches) before measuring, then measure them back to back
  await load({ ...authed('/bench/bare'), duration: 2 })
  await load({ ...authed('/deposit-address'), duration: 2 })
  const bare = await load(authed('/bench/bare'))
  const deposit = await load(authed('/deposit-address'))

  const f = (n: number) => n.toFixed(0).padStart(8)
  console.log(`\nsign-in (POST /auth/verify), real HTTP, Postgres with fsync on, load by ${verify.tool}`)
  console.log(`  siwe library verify (1 core)   ${f(siweOps)} /s`)
  console.log(
    `  POST /auth/verify              ${f(verify.rps)} /s   p50 ${verify.p50} ms  p99 ${verify.p99} ms  non-2xx ${verify.non2xx}`,
  )
  console.log(
    `  ratio, wall clock               ${(verify.rps / siweOps).toFixed(1).padStart(8)} x   (2 shared cores: load generator, Postgres, API)`,
  )
  console.log(`  CPU per verify: siwe library   ${f(siweCpuUs)} µs  → ${f(1e6 / siweCpuUs)} /s per core`)
  console.log(`  CPU per sign-in: API process   ${f(apiCpuUs)} µs  → ${f(1e6 / apiCpuUs)} /s per core`)
  console.log(`  CPU per sign-in: Postgres      ${f(pgCpuUs)} µs`)
  console.log(
    `  ratio, per core                ${(siweCpuUs / apiCpuUs).toFixed(1).padStart(8)} x   (goal ≥ 13x, aim 20x)`,
  )
  console.log(`  users created                  ${f(Number(users))}   (registered during the warm-up, not measured)`)
  console.log('\nGET /deposit-address vs a bare JWT-guarded route')
  console.log(
    `  bare guarded route             ${f(bare.rps)} /s   p50 ${bare.p50} ms  p99 ${bare.p99} ms  non-2xx ${bare.non2xx}  API CPU ${f(bare.apiCpuUs)} µs/req`,
  )
  console.log(
    `  GET /deposit-address           ${f(deposit.rps)} /s   p50 ${deposit.p50} ms  p99 ${deposit.p99} ms  non-2xx ${deposit.non2xx}  API CPU ${f(deposit.apiCpuUs)} µs/req`,
  )
  console.log(`  ratio                          ${(deposit.rps / bare.rps).toFixed(2).padStart(8)} x   (goal ≥ 0.8x)`)
  console.log(
    `  ratio, per core                ${(bare.apiCpuUs / deposit.apiCpuUs).toFixed(2).padStart(8)} x   (API CPU per request; steadier than wall clock on shared cores)`,
  )

  server.kill('SIGINT')
  await Promise.all([sql.end(), db.end()])
  await redis.stop()
  await pg.stop()
}

await main()
