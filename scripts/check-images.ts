/**
 * The run half of scripts/check-images.sh: starts the image layouts it reproduced as
 * docker-compose.yml starts the containers, on this machine, without a Docker engine.
 *
 * Each service runs its compose `command` (else the image's CMD) in its image's WORKDIR, with an
 * environment made of a generated .env.local (as scripts/dev.ts writes it) and the service's compose
 * `environment` on top; as an unprivileged user when this runs as root (the images run as `node`,
 * their files owned by root). Containers have their own network, the processes here share one, so
 * each container port is mapped to a free local port and the compose host names to 127.0.0.1 (in
 * commands, environments and health checks alike). Every compose health check and each image's
 * HEALTHCHECK runs as written (with those rewrites). Postgres and Redis are the machine's (testkit).
 *
 * Reads CHECK_IMAGES_DIR: compose.json (docker-compose.yml as JSON) and img-{api,worker,local}.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { API_FORBIDDEN_ENV_NAMES } from '@wh/config'
import { APP_LOGIN, localStackEnv, startPostgres, startRedis } from '@wh/testkit'

const env0: Record<string, string | undefined> = process.env
const WORK = env0['CHECK_IMAGES_DIR'] ?? ''
const VERBOSE = Boolean(env0['CHECK_IMAGES_VERBOSE'])
if (!WORK) throw new Error('CHECK_IMAGES_DIR is required (run scripts/check-images.sh)')

type Service = {
  command?: string[]
  working_dir?: string
  environment?: Record<string, string>
  healthcheck?: { test: string[]; retries?: number }
  build?: { dockerfile: string }
}
const compose = JSON.parse(readFileSync(join(WORK, 'compose.json'), 'utf8')) as { services: Record<string, Service> }
const svc = (name: string): Service => {
  const s = compose.services[name]
  if (!s) throw new Error(`docker-compose.yml has no service ${name}`)
  return s
}

/** What each image's Dockerfile says: where /app is here, its WORKDIR, CMD and HEALTHCHECK. */
type Image = { app: string; workdir: string; cmd: string[]; healthcheck?: string[]; env: Record<string, string> }
function image(dockerfile: string, dir: string): Image {
  const text = readFileSync(dockerfile, 'utf8').replace(/\\\n\s*/g, '')
  const runtime = text.slice(text.lastIndexOf('\nFROM '))
  const last = (re: RegExp) => [...runtime.matchAll(re)].at(-1)?.[1]
  const env: Record<string, string> = {}
  for (const [, k, v] of runtime.matchAll(/ ([A-Z_]+)=(\S+)/g)) if (k && v && !v.includes('$')) env[k] = v
  const hc = last(/^HEALTHCHECK .*?CMD (\[.*\])$/gm)
  return {
    app: dir,
    workdir: (last(/^WORKDIR (\S+)$/gm) ?? '/app').replace(/^\/app/, dir),
    cmd: JSON.parse(last(/^CMD (\[.*\])$/gm) ?? '[]'),
    ...(hc ? { healthcheck: ['CMD', ...JSON.parse(hc)] } : {}),
    env,
  }
}
const images = {
  api: image('apps/api/Dockerfile', join(WORK, 'img-api')),
  worker: image('apps/worker/Dockerfile', join(WORK, 'img-worker')),
  local: image('docker/local/Dockerfile', join(WORK, 'img-local')),
}
/** A service's working folder: its compose working_dir (under the image's /app), else the image's WORKDIR. */
const workdirOf = (name: string, img: Image): string =>
  svc(name).working_dir?.replace(/^\/app(?=\/|$)/, img.app) ?? img.workdir
const imageOf = (name: string): Image => {
  const dockerfile = svc(name).build?.dockerfile
  const found = Object.entries(images).find(([k]) =>
    dockerfile?.includes(k === 'local' ? 'docker/local/' : `apps/${k}/`),
  )
  if (!found) throw new Error(`${name}: no reproduced image for ${dockerfile}`)
  return found[1]
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number }
      s.close(() => resolve(port))
    })
  })
}

const log = (msg: string) => console.log(`check-images: ${msg}`)
/** the compose services of the local nodes, one per chain */
const ANVILS = ['anvil-ethereum', 'anvil-optimism', 'anvil-base', 'anvil-arbitrum']
const children: { name: string; child: ChildProcess }[] = []
const stops: (() => Promise<void>)[] = []
let failed = false

// the unprivileged user of the images (`node`); here `nobody`, with a home of its own like node's
const asRoot = process.getuid?.() === 0
const user = asRoot ? { uid: 65534, gid: 65534 } : {}
const home = join(WORK, 'home')
mkdirSync(home, { recursive: true })
if (asRoot) execFileSync('chown', ['65534:65534', home])

async function main() {
  const pg = await startPostgres()
  stops.push(pg.stop)
  const redis = await startRedis()
  stops.push(redis.stop)
  const { default: postgres } = await import('postgres')
  const admin = postgres(pg.url, { max: 1, onnotice: () => {} })
  await admin.unsafe('create database wheelhouse') // compose: POSTGRES_DB
  await admin.end()
  const ports: Record<string, number> = {
    'postgres:5432': pg.port,
    'redis:6379': redis.port,
    'simulator:7070': await freePort(),
    'attester:7080': await freePort(),
    'api:3000': await freePort(),
  }
  // one node per chain (docs/chains.md "Local run: four chains")
  for (const node of ANVILS) ports[`${node}:8545`] = await freePort()
  log(
    `postgres ${pg.port}, redis ${redis.port}, ${ANVILS.map((n) => `${n} ${ports[`${n}:8545`]}`).join(', ')}, simulator ${ports['simulator:7070']}, api ${ports['api:3000']}`,
  )

  /** Compose host names and container ports → this machine's (only in the service's own container for `own`). */
  const rewrite = (s: string, own?: string): string => {
    let out = s
    for (const [hostPort, local] of Object.entries(ports)) {
      const [host, port] = hostPort.split(':') as [string, string]
      out = out.replaceAll(`${host}:${port}`, `127.0.0.1:${local}`)
      if (own === host) out = out.replace(new RegExp(`(127\\.0\\.0\\.1:|^)${port}(?=\\D|$)`, 'g'), `$1${local}`)
    }
    return out
  }

  // .env.local as scripts/dev.ts generates it (env_file), then each service's compose environment
  const envLocal = localStackEnv({
    NODE_ENV: 'development',
    HOST: '127.0.0.1',
    PORT: '3000',
    LOG_LEVEL: 'info',
    DATABASE_URL: `postgres://${APP_LOGIN}@127.0.0.1:54329/wheelhouse`,
    DATABASE_OWNER_URL: 'postgres://postgres@127.0.0.1:54329/wheelhouse',
    CACHE_URL: 'redis://127.0.0.1:63799',
    EXCHANGE_HTTP_URL: 'http://127.0.0.1:7070/v3',
    EXCHANGE_WS_URL: 'ws://127.0.0.1:7070/v3/ws',
    EXCHANGE_CHAIN_RPC_URL: 'http://127.0.0.1:8545',
    RPC_URL_ETHEREUM: 'http://127.0.0.1:8545',
    RPC_URL_OPTIMISM: 'http://127.0.0.1:8546',
    RPC_URL_BASE: 'http://127.0.0.1:8547',
    RPC_URL_ARBITRUM: 'http://127.0.0.1:8548',
    CHAIN_ID_LOCAL_OPTIMISM: '902',
    CHAIN_ID_LOCAL_BASE: '903',
    CHAIN_ID_LOCAL_ARBITRUM: '904',
    RECONCILE_MODE: 'observe',
    WEB_ORIGIN: 'http://localhost:5173,http://127.0.0.1:3000',
    JWT_SECRET: randomBytes(32).toString('base64url'),
    SIWE_DOMAIN: 'localhost:3000',
    WEBHOOK_SECRET: randomBytes(32).toString('base64url'),
    METRICS_TOKEN: randomBytes(24).toString('base64url'),
    BRIDGE_RETAIN_USDC: '100',
  })
  const envOf = (name: string, img: Image): Record<string, string> => {
    const env: Record<string, string> = {
      PATH: `${join(img.app, 'bin')}:${process.env.PATH}`,
      HOME: home,
      ...img.env,
    }
    if (!ANVILS.includes(name) && name !== 'simulator' && name !== 'attester')
      for (const [k, v] of Object.entries(envLocal)) if (v !== undefined) env[k] = v
    for (const [k, v] of Object.entries(svc(name).environment ?? {})) env[k] = rewrite(String(v), name)
    return env
  }
  const argv = (cmd: string[], img: Image, name: string) =>
    cmd.map((a) => rewrite(a.replace(/^\/app(?=\/|$)/, img.app), name))

  const start = (name: string, replica = '') => {
    const img = imageOf(name)
    const [bin, ...args] = argv(svc(name).command ?? img.cmd, img, name)
    const child = spawn(bin === 'node' ? process.execPath : (bin ?? ''), args, {
      cwd: workdirOf(name, img),
      env: envOf(name, img),
      stdio: ['ignore', 'pipe', 'pipe'],
      ...user,
    })
    const label = `${name}${replica}`
    let out = ''
    const onData = (d: Buffer) => {
      out += String(d)
      if (VERBOSE) process.stdout.write(`[${label}] ${d}`)
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', onData)
    children.push({ name: label, child })
    return { child, output: () => out }
  }

  /** A health check's CMD array, run as Docker runs it: in the container's environment and folder. */
  const probe = (name: string, test: string[], img: Image): boolean => {
    const [kind, ...cmd] = test
    if (kind !== 'CMD') throw new Error(`${name}: health check ${kind} not reproduced (use CMD)`)
    const [bin, ...args] = argv(cmd, img, name)
    try {
      execFileSync(bin === 'node' ? process.execPath : (bin ?? ''), args, {
        cwd: workdirOf(name, img),
        env: envOf(name, img),
        stdio: 'ignore',
        timeout: 5_000,
        ...user,
      })
      return true
    } catch {
      return false
    }
  }
  const healthy = async (name: string, test: string[] | undefined, what: string, tries = 60) => {
    if (!test) throw new Error(`${name}: no ${what}`)
    for (let i = 0; i < tries; i++) {
      if (probe(name, test, imageOf(name))) return log(`${name}: ${what} passes`)
      await new Promise((r) => setTimeout(r, 500))
    }
    throw new Error(`${name}: ${what} still failing`)
  }

  for (const node of ANVILS) start(node)
  start('simulator')
  start('attester')
  for (const node of ANVILS) await healthy(node, svc(node).healthcheck?.test, 'compose health check')
  await healthy('simulator', svc('simulator').healthcheck?.test, 'compose health check')
  await healthy('attester', svc('attester').healthcheck?.test, 'compose health check')

  const setup = start('setup')
  const code = await new Promise<number | null>((r) => setup.child.once('exit', r))
  if (code !== 0) throw new Error(`setup exited ${code}:\n${setup.output()}`)
  log(`setup completed: ${setup.output().trim().split('\n').at(-2)}`)

  // least privilege (docs/architecture.md): the API's environment holds no key, no mnemonic and not
  // the owner's database URL, though .env.local has them; the workers not the owner's URL either
  const held = (name: string, names: readonly string[]) => names.filter((n) => envOf(name, imageOf(name))[n])
  if (held('api', API_FORBIDDEN_ENV_NAMES).length > 0)
    throw new Error(`the api service's environment holds ${held('api', API_FORBIDDEN_ENV_NAMES).join(', ')}`)
  if (held('worker', ['DATABASE_OWNER_URL']).length > 0)
    throw new Error("the worker service's environment holds DATABASE_OWNER_URL")
  log('api environment: no private key, no mnemonic, no owner URL')
  start('api')
  const replicas = (svc('worker') as { deploy?: { replicas?: number } }).deploy?.replicas ?? 1
  const workers = Array.from({ length: replicas }, (_, i) => start('worker', `-${i + 1}`))
  await healthy('api', svc('api').healthcheck?.test, 'compose health check (/health)')
  await healthy('api', images.api.healthcheck, 'image HEALTHCHECK (/health/live)')
  await healthy('worker', svc('worker').healthcheck?.test, 'compose health check')
  await healthy('worker', images.worker.healthcheck, 'image HEALTHCHECK')

  const base = `http://127.0.0.1:${ports['api:3000']}`
  const health = await (await fetch(`${base}/health`)).json()
  log(`GET /health → ${JSON.stringify(health)}`)
  if ((health as { status?: string }).status !== 'ok') throw new Error('/health is not ok')
  const live = await fetch(`${base}/health/live`)
  log(`GET /health/live → ${live.status} ${await live.text()}`)
  for (let i = 0; i < 60 && !workers.every((w) => w.output().includes('worker started')); i++)
    await new Promise((r) => setTimeout(r, 500))
  workers.forEach((w, i) => {
    if (!w.output().includes('worker started')) throw new Error(`worker-${i + 1} did not start:\n${w.output()}`)
  })
  log(`${workers.length} worker replicas started`)

  // docker compose down: SIGTERM, then the workers finish their jobs in flight and exit 0
  const exits = children.map(
    ({ name, child }) =>
      new Promise<[string, number | null]>((r) => {
        if (child.exitCode !== null) return r([name, child.exitCode])
        child.once('exit', (c, sig) => r([name, c ?? (sig === 'SIGTERM' ? 0 : null)]))
        child.kill('SIGTERM')
      }),
  )
  for (const [name, c] of await Promise.all(exits))
    if (name.startsWith('worker') || name === 'api') {
      if (c !== 0) throw new Error(`${name} exited ${c} on SIGTERM`)
    }
  log('api and workers stopped cleanly on SIGTERM')
}

try {
  await main()
  log('OK')
} catch (e) {
  failed = true
  console.error(`check-images: FAILED: ${(e as Error).message}`)
  for (const { name, child } of children)
    if (child.exitCode !== null && child.exitCode !== 0) console.error(`  ${name} exited ${child.exitCode}`)
} finally {
  for (const { child } of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  for (const stop of stops.reverse()) await stop().catch(() => {})
}
process.exit(failed ? 1 : 0)
