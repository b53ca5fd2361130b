/**
 * The position, release and wheel jobs against the Derive simulator over real HTTP, a real Postgres
 * and Redis and a real BullMQ worker that runs only the row jobs' processors (no tick runs): a new
 * position is funded and placed by its `position.advance` job; the exchange cycle lock held
 * elsewhere makes a job come back later, neither lost nor failed; a release and a resumed wheel
 * are served by theirs; a job whose row is absent does nothing (docs/architecture.md "Accepted
 * work: one job per 202").
 */
import { randomUUID } from 'node:crypto'
import { type QueueKey, type RowJobName, rowJob, rowJobId } from '@wh/jobs'
import { append } from '@wh/ledger'
import { EXCHANGE_CYCLE_LOCK, requestRelease } from '@wh/subaccounts'
import { requestPosition, resumeWheel, startWheel, stopWheel } from '@wh/trading'
import type { Job, Queue } from 'bullmq'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { rowJobProcessors } from '../src/items/index'
import { type Runtime, startRuntime } from '../src/runtime'
import { type ExchangeStack, silent, startExchangeStack, userWith } from './fixtures/exchange-stack'

const USDC = (n: number) => BigInt(n) * 1_000_000n
// a Monday 09:00 UTC: daily expiries at 08:00, the balanced profile's first one is Wednesday's
const START = Date.UTC(2026, 10, 23, 9, 0, 0)

describe('row jobs against the simulator', () => {
  let stack: ExchangeStack
  let rt: Runtime
  let connection: Redis
  const prefix = `rowjobs-${randomUUID().slice(0, 8)}`
  let queues: Map<QueueKey, Queue>
  const ended = new Map<string, Job>()

  beforeAll(async () => {
    stack = await startExchangeStack({
      sim: { startMs: START },
      env: { TRADING_PROFILE: 'balanced', PLATFORM_FEE_RATE: '0.1', WHEEL_ENABLED: 'true' },
    })
    stack.sim.control.setPrice('ETH', '3000')
    connection = new Redis(inject('redisUrl'), { maxRetriesPerRequest: null })
    rt = await startRuntime({
      connection,
      ticks: rowJobProcessors,
      consume: ['trading', 'treasury'],
      prefix,
      log: silent,
      deps: stack.deps,
    })
    queues = new Map(rt.queues)
    // a wheel's jobs are removed once they end (their id is needed again at the next resume or stop):
    // what they ended with is read from the worker's events
    for (const w of rt.workers) {
      w.on('completed', (job) => void ended.set(job.id as string, job))
      w.on('failed', (job) => job && void ended.set(job.id as string, job))
    }
  })
  afterAll(async () => {
    await rt?.close()
    connection?.disconnect()
    await stack?.close()
  })

  const sql = () => stack.sql
  const add = async (name: RowJobName, rowId: string, userId: string) => {
    const job = rowJob(name, rowId, userId)
    await queues.get(job.queue)?.add(job.name, job.data, job.opts)
    return job
  }
  async function until<T>(read: () => Promise<T | undefined>, what: string, timeoutMs = 30_000): Promise<T> {
    const deadline = performance.now() + timeoutMs
    for (;;) {
      const v = await read()
      if (v !== undefined) return v
      if (performance.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`)
      await new Promise((r) => setTimeout(r, 25))
    }
  }
  const settled = (queue: QueueKey, id: string) =>
    until(async () => {
      if (ended.has(id)) return ended.get(id)
      // the state first, then the job: a job read before it finished keeps its old return value
      const state = await queues.get(queue)?.getJobState(id)
      return state === 'completed' || state === 'failed' ? ((await queues.get(queue)?.getJob(id)) as Job) : undefined
    }, `job ${id} finished`)
  const position = async (id: string) =>
    (
      await sql()<{ state: string; instrument: string | null; funding_state: string | null }[]>`
        select p.state, p.instrument, f.state as funding_state
        from positions p left join subaccount_transfers f on f.id = p.funding_transfer_id where p.id = ${id}`
    )[0]

  it('position.advance: a new position is funded at the exchange, its instrument chosen and its order placed', async () => {
    const userId = await userWith(stack, USDC(10_000))
    const req = await requestPosition(sql(), { userId, asset: 'ETH', side: 'put', amount: USDC(5_000) })
    expect(req.state).toBe('funding')
    await add('position.advance', req.id, userId)
    const job = await settled('trading', req.id)
    expect(await job.getState()).toBe('completed')
    expect(await position(req.id)).toMatchObject({ state: 'placing', funding_state: 'funded' })
    expect(job.returnvalue).toMatchObject({
      positionId: req.id,
      funding: 'funded',
      steps: ['funded', 'chosen', 'placed'],
    })
    const [sub] = await sql()<{ exchange_id: string }[]>`
      select s.exchange_id::text from positions p join subaccounts s on s.id = p.subaccount_id where p.id = ${req.id}`
    const orders = await stack.deps.exchange.getOpenOrders(Number(sub?.exchange_id))
    expect(orders.orders.filter((o) => o.label === req.id)).toHaveLength(1)
  })

  it('the cycle lock held elsewhere: the job comes back later (delayed, not failed), then runs', async () => {
    const userId = await userWith(stack, USDC(10_000))
    const req = await requestPosition(sql(), { userId, asset: 'ETH', side: 'put', amount: USDC(2_000) })
    // a tick of another replica holds the lock
    await stack.redis.set(EXCHANGE_CYCLE_LOCK, 'another-replica', 'PX', 60_000)
    try {
      await add('position.advance', req.id, userId)
      const waiting = await until(async () => {
        const job = await queues.get('trading')?.getJob(req.id)
        return job && (await job.getState()) === 'delayed' && Number(job.data.comebacks) >= 2 ? job : undefined
      }, 'the job delayed twice')
      expect(waiting.data.waitingFor).toBe('the exchange cycle lock')
      expect(waiting.attemptsMade).toBe(0)
      expect((await position(req.id))?.funding_state).toBe('reserved')
    } finally {
      await stack.redis.del(EXCHANGE_CYCLE_LOCK)
    }
    const job = await settled('trading', req.id)
    expect(await job.getState()).toBe('completed')
    expect((await position(req.id))?.funding_state).toBe('funded')
  })

  it('release.run: a release of a subaccount never created at the exchange is released at once', async () => {
    const userId = randomUUID()
    await sql()`insert into subaccounts (user_id, asset) values (${userId}, 'BTC')`
    const release = await requestRelease(sql(), { userId, asset: 'BTC' })
    await add('release.run', release.id, userId)
    const job = await settled('treasury', release.id)
    expect(job.returnvalue).toMatchObject({ releaseId: release.id, state: 'released' })
  })

  it('wheel.next-leg: a resumed wheel gets its next leg now, and that leg its own position.advance', async () => {
    const userId = await userWith(stack, USDC(1_000))
    const { wheelId } = await startWheel(sql(), { userId, asset: 'ETH', amount: USDC(300) })
    const stopped = await stopWheel(sql(), userId, wheelId, 'now', new Date(stack.sim.control.nowMs()))
    expect(stopped.state).toBe('stopped')
    // 400 USDC in its subaccount, unclaimed (as after a leg expired out of the money)
    const exchangeId = 800_000 + Math.floor(Math.random() * 90_000)
    await sql()`update subaccounts set exchange_id = ${exchangeId} where user_id = ${userId} and asset = 'ETH'`
    await append(sql(), {
      type: 'subaccount_funded',
      payload: {
        userId,
        subaccountId: String(exchangeId),
        transactionId: randomUUID(),
        currency: 'USDC',
        amount: USDC(400),
      },
      occurredAt: new Date(stack.sim.control.nowMs()),
    })
    await resumeWheel(sql(), userId, wheelId)
    await add('wheel.next-leg', wheelId, userId)
    const job = await settled('trading', rowJobId('wheel.next-leg', wheelId))
    expect(job.failedReason).toBeUndefined()
    expect(job.returnvalue.steps).toEqual({ put_opened: 1 })
    const leg = job.returnvalue.leg as string
    const [w] = await sql()<
      { current_position_id: string }[]
    >`select current_position_id from wheels where id = ${wheelId}`
    expect(w?.current_position_id).toBe(leg)
    const next = await until(() => queues.get('trading')?.getJob(leg) ?? Promise.resolve(undefined), 'the leg’s job')
    expect(next.name).toBe('position.advance')
    expect(next.data).toMatchObject({ positionId: leg, userId })
  })

  it('a job whose row does not exist does nothing', async () => {
    const counts = async () =>
      (
        await sql()<{ p: number; r: number; t: number }[]>`
          select (select count(*)::int from positions) as p, (select count(*)::int from subaccount_releases) as r,
            (select count(*)::int from subaccount_transfers) as t`
      )[0]
    const before = await counts()
    for (const name of [
      'position.advance',
      'position.cancel',
      'position.close',
      'release.run',
      'wheel.stop',
    ] as const) {
      const ghost = randomUUID()
      const job = await add(name, ghost, randomUUID())
      const done = await settled(job.queue, job.opts.jobId)
      expect(done.finishedOn, name).toBeDefined()
      expect(done.failedReason, name).toBeUndefined()
    }
    expect(await counts()).toEqual(before)
  })
})
