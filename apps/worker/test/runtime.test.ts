import { randomUUID } from 'node:crypto'
import { lastTickDurationKey, lastTickKey, tryLock, withLock } from '@wh/jobs'
import type {} from '@wh/testkit'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest'
import { startRuntime } from '../src/runtime'
import type { TickDefinition } from '../src/ticks'

const silent = { info() {}, warn() {} }

describe('worker runtime', () => {
  let redis: Redis
  beforeAll(() => {
    redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: null })
  })
  afterAll(() => redis.disconnect())

  it('two replicas register one scheduler per tick and run each period once', async () => {
    const prefix = `t-${randomUUID().slice(0, 8)}`
    const runs: number[] = []
    const tick: TickDefinition = {
      name: 'probe',
      queue: 'accounting',
      everyMs: 300,
      process: async (job) => {
        runs.push(job.timestamp)
      },
    }
    const a = await startRuntime({ connection: redis, ticks: [tick], consume: ['accounting'], prefix, log: silent })
    const b = await startRuntime({ connection: redis, ticks: [tick], consume: ['accounting'], prefix, log: silent })
    try {
      const schedulers = await a.queues.get('accounting')?.getJobSchedulers()
      expect(schedulers?.map((s) => s.key ?? s.id)).toEqual(['probe'])
      const startedAt = Date.now()
      while (runs.length < 3) await new Promise((r) => setTimeout(r, 50))
      const periods = Math.ceil((Date.now() - startedAt) / 300) + 1
      // one job per period, not one per replica: two replicas would double the count
      expect(runs.length).toBeLessThanOrEqual(periods)
      expect(new Set(runs).size).toBe(runs.length)
    } finally {
      await Promise.all([a.close(), b.close()])
    }
  })

  it('a scheduler lost with a Redis restarted empty is registered again and the tick runs again', async () => {
    const prefix = `t-${randomUUID().slice(0, 8)}`
    let runs = 0
    const tick: TickDefinition = {
      name: 'probe',
      queue: 'accounting',
      everyMs: 100,
      process: async () => {
        runs++
      },
    }
    const rt = await startRuntime({
      connection: redis,
      ticks: [tick],
      consume: ['accounting'],
      prefix,
      log: silent,
      schedulerRefreshMs: 150,
    })
    try {
      const queue = rt.queues.get('accounting')
      while (runs < 1) await new Promise((r) => setTimeout(r, 20))
      // what a Redis restarted without its data leaves: no scheduler, nothing queued
      await queue?.removeJobScheduler('probe')
      await queue?.drain(true)
      expect(await queue?.getJobSchedulers()).toEqual([])
      const before = runs
      for (let i = 0; i < 100 && runs <= before; i++) await new Promise((r) => setTimeout(r, 20))
      expect(runs).toBeGreaterThan(before)
      expect((await queue?.getJobSchedulers())?.map((s) => s.key ?? s.id)).toEqual(['probe'])
    } finally {
      await rt.close()
    }
  })

  it('a replica consumes only the queues it is told to', async () => {
    const prefix = `t-${randomUUID().slice(0, 8)}`
    const rt = await startRuntime({ connection: redis, ticks: [], consume: ['deposits'], prefix, log: silent })
    try {
      expect(rt.workers.map((w) => w.name)).toEqual(['{deposits}'])
    } finally {
      await rt.close()
    }
  })

  it('graceful close waits for the job in flight', async () => {
    const prefix = `t-${randomUUID().slice(0, 8)}`
    let finished = false
    let started!: () => void
    const startedP = new Promise<void>((r) => {
      started = r
    })
    // the job stays in flight until the test opens its gate (state, not a duration): close() surely
    // begins while it runs, however slow the machine
    let open!: () => void
    const gate = new Promise<void>((r) => {
      open = r
    })
    const tick: TickDefinition = {
      name: 'slow',
      queue: 'treasury',
      everyMs: 60_000,
      process: async () => {
        started()
        await gate
        finished = true
      },
    }
    const rt = await startRuntime({ connection: redis, ticks: [tick], consume: ['treasury'], prefix, log: silent })
    await startedP
    let finishedWhenClosed: boolean | undefined
    const closing = rt.close().then(() => {
      finishedWhenClosed = finished
    })
    await vi.waitFor(() => expect(rt.workers.every((w) => w.closing !== undefined)).toBe(true), { interval: 10 })
    expect(finished).toBe(false)
    open()
    await closing
    expect(finishedWhenClosed).toBe(true)
  })

  it('a completed tick records its time and duration for GET /metrics; a failed one records nothing', async () => {
    const prefix = `t-${randomUUID().slice(0, 8)}`
    let done!: () => void
    const ran = new Promise<void>((r) => {
      done = r
    })
    const ok: TickDefinition = {
      name: 'metrics-ok',
      queue: 'accounting',
      everyMs: 60_000,
      process: async () => {
        await new Promise((r) => setTimeout(r, 20))
      },
    }
    const failing: TickDefinition = {
      name: 'metrics-fails',
      queue: 'accounting',
      everyMs: 60_000,
      process: async () => {
        done()
        throw new Error('boom')
      },
    }
    const before = Date.now()
    const rt = await startRuntime({
      connection: redis,
      ticks: [ok, failing],
      consume: ['accounting'],
      prefix,
      log: silent,
    })
    try {
      await ran
      // both schedulers fire at once; wait until the successful one has completed
      while ((await rt.queues.get('accounting')?.getCompletedCount()) === 0) await new Promise((r) => setTimeout(r, 20))
      const at = Number(await redis.hget(lastTickKey(prefix), 'metrics-ok'))
      expect(at).toBeGreaterThanOrEqual(before)
      expect(at).toBeLessThanOrEqual(Date.now())
      expect(Number(await redis.hget(lastTickDurationKey(prefix), 'metrics-ok'))).toBeGreaterThanOrEqual(15)
      expect(await redis.hget(lastTickKey(prefix), 'metrics-fails')).toBeNull()
    } finally {
      await rt.close()
    }
  })

  it('the cycle lock admits one holder until released or expired', async () => {
    const key = `lock-${randomUUID()}`
    const first = await tryLock(redis, key, 200)
    expect(first).toBeDefined()
    expect(await tryLock(redis, key, 200)).toBeUndefined()
    expect(await withLock(redis, key, 200, async () => 'ran')).toBeUndefined()
    await first?.release()
    expect(await withLock(redis, key, 200, async () => 'ran')).toBe('ran')
    const expiring = await tryLock(redis, key, 50)
    expect(expiring).toBeDefined()
    // the TTL runs out in Redis: wait for the key to be gone (state), not for a duration
    await vi.waitFor(async () => expect(await redis.exists(key)).toBe(0), { timeout: 5_000, interval: 10 })
    const next = await tryLock(redis, key, 1000)
    expect(next).toBeDefined()
    // the expired holder's late release must not free the new holder's lock
    await expiring?.release()
    expect(await tryLock(redis, key, 1000)).toBeUndefined()
    await next?.release()
  })

  it('a holder running past the TTL keeps the lock (renewed); a waiter gets it once released', async () => {
    const key = `lock-${randomUUID()}`
    let during: unknown = 'unset'
    const slow = withLock(redis, key, 150, async () => {
      // hold it until the renewal has extended it past three TTLs of its own (each renewal resets its
      // remaining time: counted from Redis, so a slow machine waits longer instead of failing)
      let renewals = 0
      let last = await redis.pttl(key)
      await vi.waitFor(
        async () => {
          const now = await redis.pttl(key)
          if (now > last) renewals++
          last = now
          expect(renewals).toBeGreaterThanOrEqual(9) // renewed every TTL/3: nine of them span three TTLs
        },
        { timeout: 10_000, interval: 5 },
      )
      during = await tryLock(redis, key, 150)
      return 'slow'
    })
    const waiter = withLock(redis, key, 150, async () => 'waited', { waitMs: 3_000, pollMs: 20 })
    expect(await slow).toBe('slow')
    expect(during).toBeUndefined() // nobody took it while the slow holder ran
    expect(await waiter).toBe('waited')
    // a waiter whose wait runs out gives up
    const holder = await tryLock(redis, key, 5_000)
    expect(await withLock(redis, key, 150, async () => 'never', { waitMs: 100, pollMs: 20 })).toBeUndefined()
    await holder?.release()
  })
})
