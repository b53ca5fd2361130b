/**
 * The proof of liabilities' tick and CLI (docs/solvency.md "Proof of liabilities"): published on
 * the first run of a UTC day and on no other run that day, again the next day; the Redis lock held
 * elsewhere skips the run; the CLI publishes on demand and `--force` a second root the same day; a
 * negative total is alerted.
 */
import { spawn } from 'node:child_process'
import { randomBytes, randomUUID } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { ManualClock } from '@wh/core'
import { tryLock } from '@wh/jobs'
import { appendBatch, type EventInput } from '@wh/ledger'
import { latestRoot, listRoots } from '@wh/proof/publish'
import { LIABILITIES_PUBLISH_TICK } from '@wh/proof/publish-run'
import { integrationContext } from '@wh/testkit'
import type { Alerter } from '@wh/wallet'
import type { Job } from 'bullmq'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ticks } from '../src/jobs/index'
import type { TickContext, WorkerDeps } from '../src/ticks'

const CLI = fileURLToPath(new URL('../src/cli/publish-liabilities.ts', import.meta.url))
const HOUR = 3_600_000

function runCli(
  args: string[],
  env: Record<string, string | undefined>,
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], {
      env: { PATH: process.env.PATH, WH_ENV_FILE: 'none', ...env } as NodeJS.ProcessEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => {
      out += String(d)
    })
    child.stderr.on('data', (d) => {
      err += String(d)
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
    child.on('exit', (code) => {
      clearTimeout(timer)
      resolve({ code, out: code === 0 ? out : `${out}${err}` })
    })
  })
}

const deposit = (userId: string, currency: string, amount: bigint): EventInput => ({
  type: 'deposit_detected',
  payload: { userId, chain: 'base', txHash: `0x${randomBytes(32).toString('hex')}`, logIndex: 0, currency, amount },
  occurredAt: new Date(),
})

describe('the liabilities-publish tick and CLI', () => {
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  let redis: Redis
  const clock = new ManualClock(Date.UTC(2026, 4, 10, 0, 5))
  const alerts: Array<{ text: string; fields?: object }> = []
  const alerter: Alerter = {
    channel: 'log',
    alert: async (text, fields) => {
      alerts.push({ text, ...(fields && { fields }) })
    },
  }
  const lines: string[] = []
  const log: TickContext['log'] = {
    info: (_o, msg) => lines.push(`info ${msg}`),
    warn: (_o, msg) => lines.push(`warn ${msg}`),
  }
  const tick = ticks.find((t) => t.name === LIABILITIES_PUBLISH_TICK)
  const run = async () => {
    if (!tick) throw new Error('no liabilities-publish tick')
    const deps = { sql: ctx.database.sql, redis, clock, alerter, config: ctx.config } as unknown as WorkerDeps
    return (await tick.process({} as Job, { log, deps, queues: new Map() })) as { status: string; rootId?: string }
  }

  beforeAll(async () => {
    ctx = await integrationContext()
    redis = new Redis(ctx.config.cacheUrl, { maxRetriesPerRequest: 1 })
    await appendBatch(ctx.database.sql, [
      deposit(randomUUID(), 'USDC', 5_000_000n),
      deposit(randomUUID(), 'USDC', 7_000_000n),
      deposit(randomUUID(), 'ETH', 10n ** 18n),
    ])
  })
  afterAll(async () => {
    redis.disconnect()
    await ctx.database.close()
  })

  it('is declared on the accounting queue, checked hourly', () => {
    expect(tick).toMatchObject({ queue: 'accounting', everyMs: HOUR })
  })

  it('publishes on the first run of a UTC day and on no other run that day', async () => {
    const first = await run()
    expect(first.status).toBe('published')
    clock.set(Date.UTC(2026, 4, 10, 23, 59))
    const second = await run()
    expect(second).toMatchObject({ status: 'already-published', rootId: first.rootId })
    expect(await listRoots(ctx.database.sql, { limit: 10 })).toHaveLength(1)
    clock.set(Date.UTC(2026, 4, 11, 0, 0))
    expect((await run()).status).toBe('published')
    expect((await run()).status).toBe('already-published')
    expect(await listRoots(ctx.database.sql, { limit: 10 })).toHaveLength(2)
    expect(alerts).toEqual([])
  })

  it('skips a run while another holds its lock', async () => {
    const lock = await tryLock(redis, `lock:${LIABILITIES_PUBLISH_TICK}`, 10_000)
    try {
      clock.set(Date.UTC(2026, 4, 12, 0, 0))
      expect(await run()).toEqual({ status: 'locked' })
    } finally {
      await lock?.release()
    }
    expect((await run()).status).toBe('published')
  })

  it('alerts on a negative total, counted as 0', async () => {
    const debtor = randomUUID()
    await appendBatch(ctx.database.sql, [
      deposit(debtor, 'USDC', 1_000_000n),
      {
        type: 'reconciliation_adjustment',
        payload: {
          userId: debtor,
          subaccountId: 'S-debtor',
          currency: 'USDC',
          bucket: 1_700_000_000,
          delta: -3_000_000n,
        },
        occurredAt: new Date(),
      },
    ])
    clock.set(Date.UTC(2026, 4, 13, 0, 0))
    const r = (await run()) as { status: string; negatives?: object; totals?: object }
    expect(r.status).toBe('published')
    expect(r.negatives).toEqual({ USDC: { users: 1, amount: '-2000000' } })
    expect(r.totals).toEqual({ ETH: '1000000000000000000', USDC: '12000000' })
    expect(alerts).toHaveLength(1)
    expect(alerts[0]?.text).toMatch(/negative total/)
    expect(JSON.stringify(alerts[0]?.fields)).toContain(debtor)
  })

  it('the CLI publishes on demand: nothing more today without --force, another root with it', async () => {
    // the CLI runs on the wall clock: today is a day without a root
    const today = await runCli([], ctx.env)
    expect(today.code, today.out).toBe(0)
    const published = JSON.parse(today.out.trim().split('\n').at(-1) ?? '{}')
    expect(published).toMatchObject({ status: 'published', leafCount: 4 })
    expect(published.timings).toBeDefined()
    const again = await runCli([], ctx.env)
    expect(JSON.parse(again.out.trim().split('\n').at(-1) ?? '{}')).toMatchObject({
      status: 'already-published',
      rootId: published.rootId,
    })
    const forced = await runCli(['--force'], ctx.env)
    const f = JSON.parse(forced.out.trim().split('\n').at(-1) ?? '{}')
    expect(f.status).toBe('published')
    expect(f.rootId).not.toBe(published.rootId)
    expect((await latestRoot(ctx.database.sql))?.id).toBe(f.rootId)
    expect((await runCli(['--keep-days', 'x'], ctx.env)).code).toBe(2)
  })
})
