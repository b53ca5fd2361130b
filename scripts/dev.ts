/**
 * The local run (README Quick start, line 1): Postgres, Redis, migrations, generated development
 * secrets in .env.local (reused on the next start), then the API, a worker and the web console
 * (Vite, apps/web). Ctrl-C stops all. The worker's clock follows the Derive simulator's
 * (WORKER_CLOCK=exchange), so moving the simulator's clock moves the worker's. `--demo`
 * (scripts/demo.sh): the wheel runner on and the database `<name>_demo`, for this run only.
 * Uses the machine's own Postgres and Redis binaries (scripts/bootstrap.sh installs them);
 * with a Docker engine, `docker compose up` runs the same stack instead.
 */
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createConnection } from 'node:net'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { generateMnemonic } from '@scure/bip39'
import { wordlist } from '@scure/bip39/wordlists/english.js'
import {
  CHAIN_NAMES,
  type ChainName,
  depositXpubOf,
  ENV_LOCAL_PATH,
  ENV_SPEC,
  L2_CHAIN_NAMES,
  loadConfig,
  processEnv,
} from '@wh/config'
import { grantAppRole, runMigrations } from '@wh/db'
import { createOperator, listOperators, setOperatorPassword } from '@wh/ops'
import {
  APP_LOGIN,
  apiProcessEnv,
  LOCAL_CHAIN_IDS,
  localStackEnv,
  type RunningServer,
  startChain,
  startPostgres,
  startRedis,
  TEST_PAYOUT_SESSION_KEY,
  withUser,
} from '@wh/testkit'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const PG_PORT = 54329
const REDIS_PORT = 63799
const API_PORT = 3000
/** the operator desk (its own listener, loopback) */
const ADMIN_PORT = 3001
/** one local node (anvil) per chain (docs/chains.md "Local run: four chains"); Ethereum's is the exchange's L1 */
const CHAIN_PORTS: Readonly<Record<ChainName, number>> = { ethereum: 8545, optimism: 8546, base: 8547, arbitrum: 8548 }
const rpcUrlOf = (port: number) => `http://127.0.0.1:${port}`
/** the local CCTP attester (packages/attester), answering as Circle's Iris */
const ATTESTER_URL = 'http://127.0.0.1:7080'
/** the web console (apps/web/vite.config.ts); WEB_ORIGIN lets it call the API, SIWE_DOMAIN is its host */
const WEB_PORT = 5173
const WEB_HOST = `localhost:${WEB_PORT}`

const secret = (bytes = 32) => randomBytes(bytes).toString('base64url')

/** Development settings; secrets are generated once and kept in .env.local (git-ignored). */
function ensureEnvLocal(): Record<string, string> {
  if (existsSync(ENV_LOCAL_PATH)) {
    const env: Record<string, string> = {}
    for (const line of readFileSync(ENV_LOCAL_PATH, 'utf8').split('\n')) {
      const m = /^([A-Z0-9_]+)=(.*)$/.exec(line)
      if (m?.[1]) env[m[1]] = m[2] ?? ''
    }
    return env
  }
  // the shared local-stack settings (the nodes' funded development keys), with this run's own ports
  // (one node per chain) and freshly generated secrets
  const env = Object.fromEntries(
    Object.entries(
      localStackEnv({
        NODE_ENV: 'development',
        HOST: '127.0.0.1',
        PORT: String(API_PORT),
        LOG_LEVEL: 'info',
        // the API and the worker log in as a member of the application role; migrations run as the
        // owner (docs/architecture.md "Database access")
        DATABASE_URL: `postgres://${APP_LOGIN}@127.0.0.1:${PG_PORT}/wheelhouse`,
        DATABASE_OWNER_URL: `postgres://postgres@127.0.0.1:${PG_PORT}/wheelhouse`,
        CACHE_URL: `redis://127.0.0.1:${REDIS_PORT}`,
        EXCHANGE_HTTP_URL: 'http://127.0.0.1:7070/v3',
        EXCHANGE_WS_URL: 'ws://127.0.0.1:7070/v3/ws',
        // the local attester standing in for Circle's (packages/attester; docs/chains.md "The L2 route")
        CCTP_ATTESTATION_URL: ATTESTER_URL,
        EXCHANGE_CHAIN_RPC_URL: rpcUrlOf(CHAIN_PORTS.ethereum),
        EXCHANGE_CHAIN_ID: String(LOCAL_CHAIN_IDS.ethereum),
        ...Object.fromEntries(CHAIN_NAMES.map((c) => [`RPC_URL_${c.toUpperCase()}`, rpcUrlOf(CHAIN_PORTS[c])])),
        ...Object.fromEntries(
          L2_CHAIN_NAMES.map((c) => [`CHAIN_ID_LOCAL_${c.toUpperCase()}`, String(LOCAL_CHAIN_IDS[c])]),
        ),
        RECONCILE_MODE: 'observe',
        WEB_ORIGIN: `http://${WEB_HOST},http://127.0.0.1:3000`,
        // a fresh mnemonic per checkout: deposit addresses are this machine's own (localStackEnv
        // writes its DEPOSIT_XPUB, what the API derives them from)
        MASTER_MNEMONIC: generateMnemonic(wordlist, 128),
        JWT_SECRET: secret(),
        SIWE_DOMAIN: WEB_HOST,
        WEBHOOK_SECRET: secret(),
        // the operator desk's own listener, on loopback (docs/operations.md); its operators: localOperators
        ADMIN_PORT: String(ADMIN_PORT),
        // the bridge tick leaves this much USDC in the hot wallet for withdrawals (docs/chains.md)
        BRIDGE_RETAIN_USDC: '100',
      }),
    ).filter((e): e is [string, string] => e[1] !== undefined),
  )
  writeFileSync(
    ENV_LOCAL_PATH,
    `# Generated by \`pnpm dev\` for local development. Git-ignored. Delete it to start afresh.\n${Object.entries(env)
      .map(([k, v]) => `${k}=${v}`)
      .join('\n')}\n`,
    { mode: 0o600 },
  )
  return env
}

/** The database of `--demo` runs: the configured one's name with `_demo` (scripts/demo.ts has the same). */
function demoDatabaseUrl(url: string): string {
  const u = new URL(url)
  u.pathname = `${u.pathname}_demo`
  return u.toString()
}

/** Rewrites (or adds) one KEY=VALUE line of .env.local, keeping the rest as it is. */
function setEnvLocal(key: string, value: string): void {
  const lines = readFileSync(ENV_LOCAL_PATH, 'utf8').split('\n')
  const at = lines.findIndex((l) => l.startsWith(`${key}=`))
  if (at >= 0) lines[at] = `${key}=${value}`
  else lines.splice(lines.at(-1) === '' ? -1 : lines.length, 0, `${key}=${value}`)
  writeFileSync(ENV_LOCAL_PATH, lines.join('\n'), { mode: 0o600 })
}

/** Removes one KEY=VALUE line of .env.local. */
function dropEnvLocal(key: string): void {
  const lines = readFileSync(ENV_LOCAL_PATH, 'utf8').split('\n')
  writeFileSync(ENV_LOCAL_PATH, lines.filter((l) => !l.startsWith(`${key}=`)).join('\n'), { mode: 0o600 })
}

/**
 * .env.local files from before one node per chain (one anvil for every RPC, USDC_ADDRESS_LOCAL): each L2 gets
 * a node of its own on the next ports and its chain id; the one USDC variable goes (the setup deploys each
 * chain's TestUSDC and names them), and so does the swap venue, which lived on the one node.
 */
function oneNodePerChain(env: Record<string, string>): void {
  if (env.USDC_ADDRESS_LOCAL === undefined && env.CHAIN_ID_LOCAL_BASE !== undefined) return
  const ethereum = new URL(env.RPC_URL_ETHEREUM ?? rpcUrlOf(CHAIN_PORTS.ethereum))
  L2_CHAIN_NAMES.forEach((c, i) => {
    const url = new URL(ethereum)
    url.port = String(Number(ethereum.port) + i + 1)
    keepSetting(env, `RPC_URL_${c.toUpperCase()}`, url.toString().replace(/\/$/, ''))
    keepSetting(env, `CHAIN_ID_LOCAL_${c.toUpperCase()}`, String(LOCAL_CHAIN_IDS[c]))
  })
  for (const key of ['USDC_ADDRESS_LOCAL', 'SWAP_POOL_ADDRESS_LOCAL', 'WETH_ADDRESS_LOCAL']) {
    delete env[key]
    dropEnvLocal(key)
  }
}

/** Sets `key` in this run's settings and in .env.local, when it changed. */
function keepSetting(env: Record<string, string>, key: string, value: string): void {
  if (env[key] === value) return
  env[key] = value
  setEnvLocal(key, value)
}

/** The simulator's v3 base and socket, on the host of EXCHANGE_HTTP_URL / EXCHANGE_WS_URL. */
function v3Urls(env: Record<string, string>): Record<'EXCHANGE_HTTP_URL' | 'EXCHANGE_WS_URL', string> {
  const ws = new URL(env.EXCHANGE_WS_URL ?? 'ws://127.0.0.1:7070')
  return {
    EXCHANGE_HTTP_URL: `${new URL(env.EXCHANGE_HTTP_URL ?? 'http://127.0.0.1:7070').origin}/v3`,
    EXCHANGE_WS_URL: `${ws.protocol}//${ws.host}/v3/ws`,
  }
}

/** Runs packages/wallet/scripts/local-stack.ts with the services' environment; its one JSON line. */
function localStack(env: Record<string, string>): Promise<{
  usdc: Record<ChainName, string>
  cctp: { tokenMessenger: string; messageTransmitter: string }
  chainIds: Record<ChainName, number>
  deployed: ChainName[]
  exchangeWallet: string
  v3: { depositManager: string; withdrawalOutbox: string; fundingSubaccountId: number }
}> {
  return runSetupScript('packages/wallet', 'scripts/local-stack.ts', env)
}

/**
 * Runs a package's setup script with the services' environment; its last line, parsed as JSON.
 * Asynchronously: this process drains the local node's output pipes, and a node whose pipe fills
 * while this process waits stops answering (its log grows with every request it serves).
 */
function runSetupScript<T>(pkg: string, script: string, env: Record<string, string>, args: string[] = []): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      ['--import', 'tsx', script, ...args],
      { cwd: join(ROOT, pkg), env: { ...process.env, ...env }, encoding: 'utf8', timeout: 60_000 },
      (err, stdout) => {
        if (err) return reject(err)
        resolve(JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as T)
      },
    )
    child.stderr?.pipe(process.stderr)
  })
}

/** The chain ids the nodes are started with: Ethereum's is the exchange's L1 (EXCHANGE_CHAIN_ID). */
function chainIdsOf(env: Record<string, string>): Record<ChainName, number> {
  const id = (name: string, fallback: number) => Number(env[name] ?? fallback)
  return {
    ethereum: id('EXCHANGE_CHAIN_ID', LOCAL_CHAIN_IDS.ethereum),
    optimism: id('CHAIN_ID_LOCAL_OPTIMISM', LOCAL_CHAIN_IDS.optimism),
    base: id('CHAIN_ID_LOCAL_BASE', LOCAL_CHAIN_IDS.base),
    arbitrum: id('CHAIN_ID_LOCAL_ARBITRUM', LOCAL_CHAIN_IDS.arbitrum),
  }
}

/** The chains whose node is not listening (they are started, and the database goes with them). */
async function nodesDown(config: { rpcUrls: Record<ChainName, string> }): Promise<ChainName[]> {
  const up = await Promise.all(CHAIN_NAMES.map((c) => listening(Number(new URL(config.rpcUrls[c]).port))))
  return CHAIN_NAMES.filter((_, i) => !up[i])
}

/** How long each part of the start took (printed with the banner: what the local run costs to start). */
const startedAt = performance.now()
const phases: string[] = []
let lastPhase = startedAt
function phase(name: string): void {
  const now = performance.now()
  phases.push(`${name} ${((now - lastPhase) / 1000).toFixed(1)} s`)
  lastPhase = now
}

function listening(port: number): Promise<boolean> {
  return new Promise((res) => {
    const socket = createConnection({ host: '127.0.0.1', port })
    socket.once('connect', () => {
      socket.destroy()
      res(true)
    })
    socket.once('error', () => res(false))
  })
}

function dockerEngineRuns(): boolean {
  try {
    execFileSync('docker', ['info'], { stdio: 'ignore', timeout: 5_000 })
    return true
  } catch {
    return false
  }
}

/** Where the development cluster lives: the postgres user must reach it when we are root. */
function pgDataDir(): string {
  const isRoot = process.getuid?.() === 0
  const base = isRoot
    ? join('/var/tmp/wheelhouse', createHash('sha256').update(ROOT).digest('hex').slice(0, 12))
    : join(ROOT, '.local')
  mkdirSync(base, { recursive: true })
  return join(base, 'pg')
}

/** The local run's operators: two approvers, so one can approve what the other proposes (docs/operations.md). */
const LOCAL_OPERATORS = ['alice', 'bob'] as const
const operatorPasswordKey = (name: string) => `DEV_OPERATOR_${name.toUpperCase()}_PASSWORD`

/**
 * The local run's operator settings: Bull Board mounted, one approval besides the proposer's, and
 * the shared password of .env.local files from before operators signed in with their own names
 * dropped (the service refuses ADMIN_PASSWORD now).
 */
function localOperatorSettings(env: Record<string, string>): void {
  if (env.ADMIN_PASSWORD !== undefined) {
    delete env.ADMIN_PASSWORD
    writeFileSync(
      ENV_LOCAL_PATH,
      readFileSync(ENV_LOCAL_PATH, 'utf8')
        .split('\n')
        .filter((l) => !l.startsWith('ADMIN_PASSWORD='))
        .join('\n'),
      { mode: 0o600 },
    )
  }
  if (!env.BULL_BOARD_ENABLED) keepSetting(env, 'BULL_BOARD_ENABLED', 'true')
  if (!env.ADMIN_APPROVALS_REQUIRED) keepSetting(env, 'ADMIN_APPROVALS_REQUIRED', '1')
}

/**
 * Two operators with the approver role, alice and bob, created as the schema owner, each with a
 * generated password kept in .env.local (DEV_OPERATOR_<NAME>_PASSWORD): reused while the database
 * keeps them, set again when a new database or a deleted line needs it. The passwords stay in
 * .env.local: no process of the run is given them. Returns the names.
 */
async function localOperators(env: Record<string, string>, ownerUrl: string): Promise<string[]> {
  const { default: postgres } = await import('postgres')
  const owner = postgres(ownerUrl, { max: 1, onnotice: () => {} })
  try {
    const existing = new Set((await listOperators(owner)).map((o) => o.name))
    for (const name of LOCAL_OPERATORS) {
      const key = operatorPasswordKey(name)
      const kept = env[key]
      const password = kept ?? `dev-${secret(18)}`
      if (!kept) setEnvLocal(key, password)
      if (!existing.has(name)) await createOperator(owner, { name, role: 'approver', password })
      else if (!kept) await setOperatorPassword(owner, name, password)
      delete env[key]
    }
    return [...LOCAL_OPERATORS]
  } finally {
    await owner.end()
  }
}

async function main() {
  if (process.argv.includes('--v2')) {
    // Derive retired its v2 protocol: a run that asks for it must not quietly get v3
    console.error('--v2 is no longer offered: Derive retired its v2 protocol, and the local run speaks v3 only')
    process.exit(2)
  }
  const env = ensureEnvLocal()
  // --demo (scripts/demo.sh): the wheel runner on, the worker's clock following the simulator's (so
  // moving the exchange's time, POST /_sim/advance, moves the ticks' too) and a database of its own,
  // which scripts/demo.ts reads too; none of it is written to .env.local
  const demo = process.argv.includes('--demo')
  // .env.local files from before the application role: the owner's URL becomes DATABASE_OWNER_URL
  // and the apps log in as APP_LOGIN
  if (!env.DATABASE_OWNER_URL && env.DATABASE_URL) {
    env.DATABASE_OWNER_URL = env.DATABASE_URL
    env.DATABASE_URL = withUser(env.DATABASE_URL, APP_LOGIN)
    setEnvLocal('DATABASE_OWNER_URL', env.DATABASE_OWNER_URL)
    setEnvLocal('DATABASE_URL', env.DATABASE_URL)
  }
  // .env.local files from before the operator desk
  if (!env.ADMIN_PORT) keepSetting(env, 'ADMIN_PORT', String(ADMIN_PORT))
  localOperatorSettings(env)
  // .env.local files from before the API stopped reading the mnemonic
  if (!env.DEPOSIT_XPUB && env.MASTER_MNEMONIC) {
    env.DEPOSIT_XPUB = depositXpubOf(env.MASTER_MNEMONIC)
    setEnvLocal('DEPOSIT_XPUB', env.DEPOSIT_XPUB)
  }
  // the wheel runner is on in the local run (a wheel started there runs its next legs), unless
  // .env.local or the environment says otherwise
  env.WHEEL_ENABLED ??= processEnv().WHEEL_ENABLED ?? 'true'
  // the worker follows the simulator's clock in every local run, so POST /_sim/advance moves it too
  // instead of leaving its auth, nonces and expiries behind the exchange's (docs/exchange.md "Control API")
  env.WORKER_CLOCK = 'exchange'
  // .env.local files from before the payout key had its own setting (docs/operations.md "Exchange session keys")
  if (!env.EXCHANGE_PAYOUT_SESSION_KEY) keepSetting(env, 'EXCHANGE_PAYOUT_SESSION_KEY', TEST_PAYOUT_SESSION_KEY)
  if (demo)
    Object.assign(env, {
      WHEEL_ENABLED: 'true',
      DATABASE_URL: demoDatabaseUrl(env.DATABASE_URL ?? ''),
      DATABASE_OWNER_URL: demoDatabaseUrl(env.DATABASE_OWNER_URL ?? ''),
    })
  // .env.local files from before the web console signed in for the API's own host
  if (env.SIWE_DOMAIN === `localhost:${API_PORT}`) {
    env.SIWE_DOMAIN = WEB_HOST
    setEnvLocal('SIWE_DOMAIN', WEB_HOST)
  }
  // Derive v3 (the only protocol; v2 was retired): the API and the worker speak v3 to the simulator, and
  // money enters it on L1 through the OnchainActionManager stand-in (docs/exchange-v3.md "Money in").
  // .env.local files from before v3: the simulator's v3 base and socket
  for (const [key, value] of Object.entries(v3Urls(env))) keepSetting(env, key, value)
  oneNodePerChain(env)
  // .env.local files from before the L2 route: the local attester
  if (!env.CCTP_ATTESTATION_URL) keepSetting(env, 'CCTP_ATTESTATION_URL', ATTESTER_URL)
  // the funding subaccount, the deposit manager and the TestUSDCs are the setup's to create (below)
  const config = loadConfig(env, { setup: true })
  const started: RunningServer[] = []
  const children: ChildProcess[] = []

  const pgPort = Number(new URL(config.databaseUrl).port)
  const redisPort = Number(new URL(config.cacheUrl).port)
  if (dockerEngineRuns() && !(await listening(pgPort))) {
    console.log('Docker engine found: starting postgres and redis with docker compose')
    execFileSync('docker', ['compose', 'up', '-d', '--wait', 'postgres', 'redis'], { cwd: ROOT, stdio: 'inherit' })
  }
  if (!(await listening(pgPort))) {
    const dataDir = pgDataDir()
    mkdirSync(dataDir, { recursive: true })
    started.push(await startPostgres({ dataDir, port: pgPort, durable: true }))
  }
  const ownerUrl = env.DATABASE_OWNER_URL ?? config.databaseUrl
  const admin = new URL(ownerUrl)
  const dbName = admin.pathname.slice(1)
  admin.pathname = '/postgres'
  const { default: postgres } = await import('postgres')
  const sql = postgres(admin.toString(), { max: 1, onnotice: () => {} })
  const exists = await sql`select 1 from pg_database where datname = ${dbName}`
  // The database goes with the chains. The nodes and the simulator keep their state in memory, so a
  // new node gets a new database: an earlier chain's rows (the scan cursor, the outbox's nonces)
  // would stall the new one, and the journal would name money that no longer exists
  const down = await nodesDown(config)
  const stale = exists.length > 0 && down.length > 0
  if (stale) {
    console.log(`new local nodes start (${down.join(', ')}): database ${dbName} is dropped and created afresh`)
    await sql.unsafe(`drop database "${dbName}" with (force)`)
  }
  if (exists.length === 0 || stale) await sql.unsafe(`create database "${dbName}"`)
  await sql.end()
  await runMigrations(ownerUrl)
  // APP_LOGIN is created (passwordless: this cluster trusts loopback) and made a member of wheelhouse_app
  await grantAppRole(ownerUrl, config.databaseUrl)
  const operators = await localOperators(env, ownerUrl)

  if (!(await listening(redisPort))) started.push(await startRedis({ port: redisPort }))

  phase('database and redis')

  // one local EVM node per chain, each under its own chain id (Ethereum's is the exchange's L1)
  const ids = chainIdsOf(env)
  const nodes = await Promise.all(
    down.map((c) => startChain({ port: Number(new URL(config.rpcUrls[c]).port), chainId: ids[c] })),
  )
  for (const n of nodes) started.push({ url: n.rpcUrl, port: n.port, stop: n.stop })
  phase(`nodes (${down.length} started)`)

  let stopping = false
  async function stop(code = 0) {
    if (stopping) return
    stopping = true
    for (const c of children) c.kill('SIGTERM')
    await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once('exit', r)))))
    for (const s of started.reverse()) await s.stop()
    process.exit(code)
  }
  process.on('SIGINT', () => void stop())
  process.on('SIGTERM', () => void stop())

  // Each process gets what it reads, and not .env.local (WH_ENV_FILE=none): the API its own part (no
  // key, no mnemonic: API_ENV_NAMES), the others everything but the owner's database URL
  // (docs/architecture.md "Least privilege"). The service's variables in this shell are not passed on.
  const shell = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !(k in ENV_SPEC) && k !== 'DATABASE_OWNER_URL'),
  )
  const envOf = (name: string): Record<string, string | undefined> => {
    if (name === 'api') return { ...shell, WH_ENV_FILE: 'none', ...apiProcessEnv(env) }
    const { DATABASE_OWNER_URL: _owner, ...rest } = env
    return { ...shell, WH_ENV_FILE: 'none', ...rest }
  }
  const run = (name: string, cwd: string, args = ['src/main.ts']) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
      cwd: join(ROOT, cwd),
      stdio: 'inherit',
      env: envOf(name),
    })
    child.on('exit', (code, signal) => {
      if (!stopping) {
        console.error(`${name} exited (${code ?? signal}); stopping the local run`)
        void stop(1)
      }
    })
    children.push(child)
  }
  // the Derive simulator, on the port of EXCHANGE_HTTP_URL (it speaks Derive's JSON-RPC and WebSocket)
  const exchangePort = new URL(config.exchange.httpUrl).port
  if (!(await listening(Number(exchangePort)))) {
    // prices walk in the local run; the demo moves them itself (scripts/demo.ts), so they stay put there
    run('derive-simulator', 'tools/derive-simulator', [
      'src/main.ts',
      exchangePort,
      String(config.exchange.chainId),
      ...(demo ? ['--still'] : []),
    ])
  }
  for (let i = 0; i < 200 && !(await listening(Number(exchangePort))); i++) await new Promise((r) => setTimeout(r, 50))
  // the local CCTP attester, on the port of CCTP_ATTESTATION_URL (the setup tells it which transmitters to watch)
  const attesterPort = new URL(config.cctp.attestationUrl).port
  if (!(await listening(Number(attesterPort)))) run('cctp-attester', 'packages/attester', ['src/main.ts', attesterPort])
  for (let i = 0; i < 200 && !(await listening(Number(attesterPort))); i++) await new Promise((r) => setTimeout(r, 50))
  phase('simulator and attester')
  // TestUSDC on each chain's node (USDC_ADDRESS_LOCAL_<CHAIN>, so sweeps work locally)
  // and EXCHANGE_WALLET_ADDRESS registered with the simulator, SESSION_PRIVATE_KEY's address as
  // its session key (so the worker's Derive client is accepted): packages/wallet/scripts/local-stack.ts
  let local: Awaited<ReturnType<typeof localStack>>
  try {
    local = await localStack(env)
  } catch (e) {
    console.error(`local chain and simulator setup failed: ${(e as Error).message}`)
    return stop(1)
  }
  // each node is the chain it was started as (a node left running from another checkout may not be)
  const wrong = CHAIN_NAMES.filter((c) => local.chainIds[c] !== ids[c])
  if (wrong.length > 0) {
    console.error(
      `the nodes of ${wrong.join(', ')} answer other chain ids (${JSON.stringify(local.chainIds)}): stop them`,
    )
    return stop(1)
  }
  for (const c of CHAIN_NAMES) keepSetting(env, `USDC_ADDRESS_LOCAL_${c.toUpperCase()}`, local.usdc[c])
  phase('chain setup')
  // the swap venue conversions trade on: TestWETH and the pool, the swap wallet's and the exchange
  // wallet's inventory (packages/swap/scripts/local-venue.ts)
  let venue: { poolAddress: string; wethAddress: string; deployed: boolean }
  try {
    venue = await runSetupScript('packages/swap', 'scripts/local-venue.ts', env)
  } catch (e) {
    console.error(`local swap venue setup failed: ${(e as Error).message}`)
    return stop(1)
  }
  for (const [key, value] of [
    ['SWAP_POOL_ADDRESS_LOCAL', venue.poolAddress],
    ['WETH_ADDRESS_LOCAL', venue.wethAddress],
  ] as const) {
    if (env[key]?.toLowerCase() !== value.toLowerCase()) {
      env[key] = value
      setEnvLocal(key, value)
    }
  }
  phase('swap venue')
  // the simulator keeps no state: each start deploys the manager and the outbox and opens a funding
  // subaccount, which .env.local then names, so the ops CLI and scripts/demo.ts read the apps' configuration
  for (const [key, value] of [
    ['EXCHANGE_DEPOSIT_MANAGER_ADDRESS', local.v3.depositManager],
    ['EXCHANGE_WITHDRAWAL_OUTBOX_ADDRESS', local.v3.withdrawalOutbox],
    ['EXCHANGE_FUNDING_SUBACCOUNT_ID', String(local.v3.fundingSubaccountId)],
    // CCTP's stand-ins, one address on every node (docs/chains.md "The L2 route")
    ['CCTP_TOKEN_MESSENGER_LOCAL', local.cctp.tokenMessenger],
    ['CCTP_MESSAGE_TRANSMITTER_LOCAL', local.cctp.messageTransmitter],
  ] as const)
    keepSetting(env, key, value)
  run('api', 'apps/api')
  run('worker', 'apps/worker')
  const base = `http://${config.host}:${config.port}`
  // the web console: Vite's dev server, told where the API is (not written to .env.local)
  env.VITE_API_URL = base
  run('web', 'apps/web', ['node_modules/vite/bin/vite.js'])
  for (let i = 0; i < 100 && !(await listening(config.port)); i++) await new Promise((r) => setTimeout(r, 100))
  phase('api listening')
  console.log(`
  Wheelhouse is running (settings in .env.local), started in ${((performance.now() - startedAt) / 1000).toFixed(1)} s: ${phases.join(', ')}
    API            ${base}
    Web console    http://${WEB_HOST}   (sign in with an injected wallet; SIWE domain ${WEB_HOST})
    OpenAPI UI     ${base}/docs
    Bull Board     ${base}/admin/queues   (sign in as ${operators.join(' or ')}: passwords ${operators.map(operatorPasswordKey).join(', ')} in .env.local)
    Operator desk  http://127.0.0.1:${env.ADMIN_PORT}/admin/overview   (sign in with POST /admin/session, the same names; docs/operations.md)
    Health         ${base}/health
${CHAIN_NAMES.map((c) => `    ${c.padEnd(15)}${config.rpcUrls[c]} (chain id ${ids[c]}; TestUSDC ${local.usdc[c]})`).join('\n')}
    Derive sim     ${config.exchange.httpUrl}  (control API under /_sim/; wallet ${local.exchangeWallet} registered)
    CCTP           TokenMessengerV2 ${local.cctp.tokenMessenger}, MessageTransmitterV2 ${local.cctp.messageTransmitter} on every node; attester ${config.cctp.attestationUrl} (control under /_attester/)
    Test USDC      ${local.deployed.length > 0 ? `deployed now on ${local.deployed.join(', ')}; dev account 0 holds 1,000,000 on each` : 'already deployed'}
    Swap venue     pool ${venue.poolAddress}, TestWETH ${venue.wethAddress} (${venue.deployed ? 'deployed now' : 'already deployed'})
${demo ? "    Demo mode      the wheel runner is on and the worker's clock follows the simulator's (bash scripts/demo.sh)\n" : ''}    Derive v3      L1 deposits through ${local.v3.depositManager} into funding subaccount ${local.v3.fundingSubaccountId}, paid out through ${local.v3.withdrawalOutbox}

  Try it:
    curl ${base}/auth/nonce
    open the web console, or sign a SIWE message for domain ${config.siweDomain} with that nonce, POST it to /auth/verify,
    then: curl -H "Authorization: Bearer <token>" ${base}/deposit-address
  Ctrl-C stops everything.
`)
}

await main()
