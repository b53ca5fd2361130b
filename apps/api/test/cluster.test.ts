/**
 * The API on every core (API_PROCESSES, src/cluster.ts), as deployed: the real main.ts started as a
 * primary with two API processes on one port. Each fresh connection goes to the next process
 * (node:cluster's round robin), so requests on fresh connections reach both, and what they share
 * must hold across them: the sign-in rate limit counts once for the machine, every WebSocket gets
 * every price whichever process holds it, /metrics sums what every process counted. A process
 * that dies is replaced; SIGTERM to the primary stops them all.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { get } from 'node:http'
import { fileURLToPath } from 'node:url'
import { marketNames } from '@wh/market'
import { freePort, integrationContext } from '@wh/testkit'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { waitFor } from './market-support'
import { seedFeedPrice } from './support'

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url))
const RATE_LIMIT = 6

/** the pids of `pid`'s children (ps exits 1 when there are none) */
function childrenOf(pid: number): number[] {
  let out: string
  try {
    out = execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
  } catch (e) {
    if ((e as { status?: number }).status === 1) return []
    throw e
  }
  return out
    .split('\n')
    .map((l) => Number(l.trim()))
    .filter((n) => n > 0)
}

/** waitFor (market-support.ts) polling every 100 ms: each probe here spawns ps or opens connections */
const until = <T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms = 30_000) =>
  waitFor(probe, what, ms, 100)

describe('the API on two processes sharing one port', () => {
  let primary: ChildProcess
  let base: string
  let redis: Redis
  let output = ''
  const exited = () => new Promise<number | null>((resolve) => primary.once('exit', (code) => resolve(code)))
  /** one request on a connection of its own (closed after), as a new client opens one */
  const fresh = (path: string) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      get(`${base}${path}`, { agent: false }, (res) => {
        let text = ''
        res.on('data', (d) => {
          text += String(d)
        })
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }))
      }).on('error', reject)
    })

  beforeAll(async () => {
    const ctx = await integrationContext()
    await ctx.database.close()
    redis = new Redis(ctx.config.cacheUrl)
    const port = await freePort()
    base = `http://127.0.0.1:${port}`
    primary = spawn(process.execPath, ['--import', 'tsx', MAIN], {
      env: {
        ...ctx.env,
        PATH: process.env.PATH,
        WH_ENV_FILE: 'none',
        HOST: '127.0.0.1',
        PORT: String(port),
        API_PROCESSES: '2',
        AUTH_RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT),
        LOG_LEVEL: 'warn',
      } as NodeJS.ProcessEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    primary.stdout?.on('data', (d) => {
      output = (output + String(d)).slice(-4000)
    })
    primary.stderr?.on('data', (d) => {
      output = (output + String(d)).slice(-4000)
    })
    let last = 'no answer yet'
    await until(
      'both processes answering',
      async () => {
        const up = await Promise.all([fresh('/health/live'), fresh('/health/live')]).catch((e: Error) => {
          last = e.message
          return undefined
        })
        const children = childrenOf(primary.pid as number).length
        if (up) last = `${up.map((r) => `${r.status} ${r.text.slice(0, 120)}`).join(' | ')}; ${children} processes`
        return up?.every((r) => r.status === 200) && children === 2 ? true : undefined
      },
      // two processes compiling the whole API through tsx on a machine the rest of the suite fills
      150_000,
    ).catch((e: Error) => {
      throw new Error(`${e.message}; last seen: ${last}; the primary's output: ${output}`)
    })
  }, 170_000)

  afterAll(async () => {
    if (primary.exitCode === null) primary.kill('SIGKILL')
    redis?.disconnect()
  })

  it('runs two API processes under the primary', () => {
    expect(childrenOf(primary.pid as number)).toHaveLength(2)
  })

  it('counts the sign-in limit once for the machine, not once per process', async () => {
    const statuses: number[] = []
    for (let i = 0; i < RATE_LIMIT * 2; i++) statuses.push((await fresh('/auth/nonce')).status)
    // per process, each would have allowed RATE_LIMIT of its RATE_LIMIT requests: all 200
    expect(statuses.filter((s) => s === 200)).toHaveLength(RATE_LIMIT)
    expect(statuses.filter((s) => s === 429)).toHaveLength(RATE_LIMIT)
  }, 30_000)

  it('delivers a price to every WebSocket, whichever process holds it', async () => {
    const url = `${base.replace('http', 'ws')}/ws/prices?assets=ETH`
    const sockets = Array.from({ length: 4 }, () => new WebSocket(url))
    const seen = sockets.map(() => [] as Array<{ type: string; index?: string }>)
    sockets.forEach((ws, i) => {
      ws.onmessage = (e) => seen[i]?.push(JSON.parse(String(e.data)))
    })
    try {
      await until('every subscription', () =>
        seen.every((m) => m.some((x) => x.type === 'subscribed')) ? true : undefined,
      )
      const index = `${3000 + Math.floor(Math.random() * 1000)}.${Date.now() % 1000}`
      await seedFeedPrice(redis, marketNames(), 'ETH', index, Date.now())
      await until('the price on every socket', () =>
        seen.every((m) => m.some((x) => x.type === 'price' && x.index === index)) ? true : undefined,
      )
    } finally {
      for (const ws of sockets) ws.close()
    }
  }, 30_000)

  it('answers /metrics with the requests of every process summed', async () => {
    // a scrape may fail (503) while a process is slow to answer the primary: Prometheus scrapes again
    const count = async () => {
      const { text } = await until('a scrape', async () => {
        const r = await fresh('/metrics')
        return r.status === 200 ? r : undefined
      })
      const line = text
        .split('\n')
        .find((l) => l.startsWith('wh_http_requests_total{method="GET",route="/health/live"'))
      return line === undefined ? 0 : Number(line.split(' ').at(-1))
    }
    const before = await count()
    const n = 10
    for (let i = 0; i < n; i++) await fresh('/health/live')
    // the requests went to both processes in turn: one process's count alone would be about n / 2
    expect(await count()).toBe(before + n)
  }, 30_000)

  it('replaces a process that dies, and all of them, and stops every process on SIGTERM', async () => {
    const [victim, survivor] = childrenOf(primary.pid as number) as [number, number]
    process.kill(victim, 'SIGKILL')
    const replaced = await until('a replacement process', () => {
      const now = childrenOf(primary.pid as number)
      return now.length === 2 && !now.includes(victim) ? now : undefined
    })
    expect(replaced).toContain(survivor)
    // a replacement compiles the whole API through tsx again, as slow as the first start on a loaded machine
    const RESTART_MS = 150_000
    await until(
      'both answering again',
      async () => {
        const r = await Promise.all([fresh('/health/live'), fresh('/health/live')]).catch(() => undefined)
        return r?.every((x) => x.status === 200) ? true : undefined
      },
      RESTART_MS,
    )
    // every process at once: the primary, left with none, stays and forks them again
    for (const pid of replaced) process.kill(pid, 'SIGKILL')
    const again = await until('two new processes', () => {
      const now = childrenOf(primary.pid as number)
      return now.length === 2 && !now.some((p) => replaced.includes(p)) ? now : undefined
    })
    expect(primary.exitCode).toBeNull()
    await until(
      'answering again',
      async () => ((await fresh('/health/live').catch(() => undefined))?.status === 200 ? true : undefined),
      RESTART_MS,
    )

    const exit = exited()
    primary.kill('SIGTERM')
    expect(await exit, output).toBe(0)
    for (const pid of again) expect(() => process.kill(pid, 0)).toThrow()
  }, 400_000)
})
