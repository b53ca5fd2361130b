/**
 * Real Postgres and Redis servers for tests, benchmarks and the local run: the machine's
 * own binaries (Debian packages), started as child processes on loopback. No Docker needed.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.unref()
    srv.on('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address()
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))))
    })
  })
}

/** Finds a Postgres binary: on PATH, else Debian's versioned folder. */
export function pgBinary(name: 'initdb' | 'postgres' | 'pg_ctl'): string {
  try {
    return execFileSync('bash', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim()
  } catch {
    const base = '/usr/lib/postgresql'
    if (existsSync(base)) {
      const versions = readdirSync(base).sort((a, b) => Number(b) - Number(a))
      for (const v of versions) {
        const p = join(base, v, 'bin', name)
        if (existsSync(p)) return p
      }
    }
    throw new Error(`${name} not found: install Postgres (Debian: apt-get install -y postgresql)`)
  }
}

const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0

/** When we are root, Postgres binaries run as the `postgres` user (initdb refuses root). */
function pgUser(): { uid: number; gid: number } | undefined {
  if (!isRoot()) return undefined
  return {
    uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim()),
    gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim()),
  }
}

export interface RunningServer {
  readonly url: string
  readonly port: number
  stop(): Promise<void>
}

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (await check()) return
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`${what} did not become ready within ${timeoutMs} ms`)
}

function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGINT'): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    const t = setTimeout(() => child.kill('SIGKILL'), 5_000)
    child.once('exit', () => {
      clearTimeout(t)
      resolve()
    })
    child.kill(signal)
  })
}

/**
 * A throwaway Postgres cluster, tuned for tests (no fsync). `durable: true` keeps
 * fsync on, for benchmarks that should not flatter the database.
 */
export async function startPostgres(
  opts: { durable?: boolean; dataDir?: string; port?: number } = {},
): Promise<RunningServer> {
  const port = opts.port ?? (await freePort())
  const root = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'wh-pg-'))
  const dataDir = join(root, 'data')
  const sockDir = join(root, 'sock')
  mkdirSync(sockDir, { recursive: true })
  chmodSync(root, 0o755)
  const user = pgUser()
  if (user) {
    chownSync(root, user.uid, user.gid)
    chownSync(sockDir, user.uid, user.gid)
  }
  if (!existsSync(join(dataDir, 'PG_VERSION'))) {
    execFileSync(
      pgBinary('initdb'),
      ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--no-sync'],
      { stdio: 'pipe', cwd: root, ...user },
    )
  }
  const settings = [
    '-c',
    `port=${port}`,
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    `unix_socket_directories=${sockDir}`,
    '-c',
    'max_connections=300',
    '-c',
    'shared_buffers=256MB',
    ...(opts.durable ? [] : ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']),
  ]
  const child = spawn(pgBinary('postgres'), ['-D', dataDir, ...settings], {
    stdio: ['ignore', 'ignore', 'pipe'],
    cwd: root,
    ...user,
  })
  let stderr = ''
  child.stderr?.on('data', (d) => {
    stderr = (stderr + String(d)).slice(-4000)
  })
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`
  const { default: postgres } = await import('postgres')
  try {
    await waitFor(async () => {
      if (child.exitCode !== null) throw new Error(`postgres exited: ${stderr}`)
      const sql = postgres(url, { max: 1, connect_timeout: 1, onnotice: () => {} })
      try {
        await sql`select 1`
        return true
      } catch {
        return false
      } finally {
        await sql.end({ timeout: 1 })
      }
    }, 'postgres')
  } catch (e) {
    child.kill('SIGKILL')
    throw e
  }
  return {
    url,
    port,
    async stop() {
      await stopChild(child, 'SIGINT')
      if (!opts.dataDir) rmSync(root, { recursive: true, force: true })
    },
  }
}

/** A throwaway Redis server with no persistence. */
export async function startRedis(opts: { port?: number } = {}): Promise<RunningServer> {
  const port = opts.port ?? (await freePort())
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'warning'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  )
  child.on('error', () => {})
  const url = `redis://127.0.0.1:${port}`
  const { Redis } = await import('ioredis')
  await waitFor(async () => {
    if (child.exitCode !== null)
      throw new Error('redis-server exited (is it installed? apt-get install -y redis-server)')
    const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null })
    r.on('error', () => {})
    try {
      await r.connect()
      return (await r.ping()) === 'PONG'
    } catch {
      return false
    } finally {
      r.disconnect()
    }
  }, 'redis')
  return { url, port, stop: () => stopChild(child, 'SIGTERM') }
}
