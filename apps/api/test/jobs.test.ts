import { randomUUID } from 'node:crypto'
import { createDatabase } from '@wh/db'
import { type RunningSimulator, startDeriveSimulator } from '@wh/derive-simulator'
import { HttpTransport, type Instrument, publicReader, toE18 } from '@wh/exchange'
import { BULL_PREFIX, QUEUES, type QueueKey, type RowJobName, rowJobId } from '@wh/jobs'
import { append } from '@wh/ledger'
import { freePort } from '@wh/testkit'
import { type Job, Queue } from 'bullmq'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildAdminServer } from '../src/admin/server'
import { buildServer } from '../src/server'
import { deskCaller, deskSignIn, makeOperators } from './desk-support'
import { type Api, fundedUser, startApi } from './support'

/**
 * Accepted work starts at once (docs/architecture.md "Accepted work: one job per 202"): every
 * route that answers 202 (and the wheel's resume, which accepts work for later) adds its job on
 * the queue Bull Board shows, after its transaction committed, with an id built from the row's, so
 * a replayed request adds nothing. Redis refusing the job never fails the request.
 */
describe('one job per 202', () => {
  let api: Api
  let sim: RunningSimulator
  let put: Instrument
  const usdc = (n: number) => BigInt(n) * 1_000_000n
  // an EIP-55 test vector, not derived from the test mnemonic (whose addresses are deposit addresses here)
  const DEST = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'

  beforeAll(async () => {
    sim = await startDeriveSimulator({ chainId: 901 })
    api = await startApi({ EXCHANGE_HTTP_URL: sim.v3HttpUrl, EXCHANGE_WS_URL: sim.v3WsUrl })
    const options = await publicReader(new HttpTransport({ baseUrl: sim.v3HttpUrl })).getInstruments({
      currency: 'ETH',
      instrument_type: 'option',
    })
    const nowSec = Date.now() / 1000
    put = options.find(
      (i) => i.option_details?.option_type === 'P' && (i.option_details?.expiry ?? 0) > nowSec + 86_400,
    ) as Instrument
  })
  afterAll(async () => {
    await api?.close()
    await sim?.close()
  })

  const sql = () => api.ctx.database.sql
  const auth = (token: string, more: Record<string, string> = {}) => ({ authorization: `Bearer ${token}`, ...more })
  const queueOf = (key: QueueKey) => api.queues.find((q) => q.name === QUEUES[key]) as Queue
  const jobOf = (key: QueueKey, name: RowJobName, rowId: string) => queueOf(key).getJob(rowJobId(name, rowId))
  const jobsNamed = async (key: QueueKey, name: RowJobName) =>
    (await queueOf(key).getJobs(['waiting', 'delayed', 'active', 'completed', 'failed'])).filter((j) => j.name === name)
  const post = (token: string, url: string, payload?: object, headers: Record<string, string> = {}) =>
    api.app.inject({ method: 'POST', url, headers: auth(token, headers), ...(payload && { payload }) })
  const del = (token: string, id: string, qs = '') =>
    api.app.inject({ method: 'DELETE', url: `/positions/${id}${qs}`, headers: auth(token) })

  function expectJob(job: Job | undefined, name: RowJobName, data: Record<string, string>) {
    expect(job, `a ${name} job`).toBeDefined()
    expect(job?.name).toBe(name)
    expect(job?.data).toEqual({ purpose: name, ...data, requestId: expect.any(String) })
    expect(job?.opts.attempts).toBeGreaterThan(1)
  }

  it('POST /withdrawals: withdrawal.send on the withdrawals queue, its id the row id; a replayed key adds nothing', async () => {
    const { token, userId } = await fundedUser(api, usdc(100))
    const body = { chain: 'base', asset: 'USDC', amount: '25', destination: DEST }
    const key = { 'idempotency-key': `w-${randomUUID()}` }
    const first = await post(token, '/withdrawals', body, key)
    expect(first.statusCode, first.body).toBe(202)
    const id = first.json().id as string
    const job = await jobOf('withdrawals', 'withdrawal.send', id)
    expectJob(job, 'withdrawal.send', { withdrawalId: id, userId })
    expect(job?.id).toBe(id)

    const again = await post(token, '/withdrawals', body, key)
    expect(again.statusCode).toBe(202)
    expect(again.json().id).toBe(id)
    const mine = (await jobsNamed('withdrawals', 'withdrawal.send')).filter((j) => j.data.userId === userId)
    expect(mine.map((j) => j.id)).toEqual([id])
  })

  it('POST /positions: position.advance on the trading queue for a leg and for a wheel’s first leg', async () => {
    const { token, userId } = await fundedUser(api, usdc(1000))
    const key = { 'idempotency-key': `p-${randomUUID()}` }
    const leg = await post(token, '/positions', { asset: 'BTC', side: 'put', amount: '300' }, key)
    expect(leg.statusCode, leg.body).toBe(202)
    const id = leg.json().id as string
    expectJob(await jobOf('trading', 'position.advance', id), 'position.advance', { positionId: id, userId })
    expect((await post(token, '/positions', { asset: 'BTC', side: 'put', amount: '300' }, key)).json().id).toBe(id)
    expect((await jobsNamed('trading', 'position.advance')).filter((j) => j.data.userId === userId)).toHaveLength(1)

    const wheel = await post(token, '/positions', { asset: 'ETH', side: 'wheel', amount: '300' })
    expect(wheel.statusCode, wheel.body).toBe(202)
    const first = wheel.json().id as string
    expectJob(await jobOf('trading', 'position.advance', first), 'position.advance', { positionId: first, userId })
  })

  it('DELETE /positions/:id: position.cancel for a leg placing orders, wheel.stop for its stopping wheel', async () => {
    const { token, userId } = await fundedUser(api, usdc(1000))
    const w = (await post(token, '/positions', { asset: 'ETH', side: 'wheel', amount: '500' })).json()
    await sql()`update positions set state = 'placing', instrument = 'ETH-20300101-2000-P' where id = ${w.id}`
    const res = await del(token, w.id)
    expect(res.statusCode).toBe(202)
    const cancel = await jobOf('trading', 'position.cancel', w.id)
    expectJob(cancel, 'position.cancel', { positionId: w.id, userId })
    expect(cancel?.id).toBe(`${w.id}.cancel`)
    const stop = await jobOf('trading', 'wheel.stop', w.wheelId)
    expectJob(stop, 'wheel.stop', { wheelId: w.wheelId, userId })
    expect(stop?.id).toBe(`${w.wheelId}.stop`)

    // a cancel that ends at once (nothing at the exchange) answers 200 and leaves nothing to do
    const single = (await post(token, '/positions', { asset: 'BTC', side: 'put', amount: '100' })).json()
    expect((await del(token, single.id)).statusCode).toBe(200)
    expect(await jobOf('trading', 'position.cancel', single.id)).toBeUndefined()
  })

  it('DELETE /positions/:id: position.close for a sold leg; DELETE of a wheel stopping after its cycle: wheel.stop', async () => {
    const { token, userId } = await fundedUser(api, usdc(1000))
    const exchangeId = 700_000 + Math.floor(Math.random() * 200_000)
    const [sub] = await sql()<{ id: string }[]>`
      insert into subaccounts (user_id, asset, exchange_id) values (${userId}, 'ETH', ${exchangeId}) returning id`
    const size = ((15n * 10n ** 18n) / 10n).toString()
    const [p] = await sql()<{ id: string }[]>`
      insert into positions (user_id, asset, side, subaccount_id, state, collateral_currency, collateral_amount,
        instrument, strike_e18, expiry_sec, size_e18, filled_e18, premium, fees)
      values (${userId}, 'ETH', 'put', ${sub?.id ?? ''}, 'open', 'USDC', '5000000000', ${put.instrument_name},
        ${toE18(put.option_details?.strike ?? '0').toString()}, ${put.option_details?.expiry ?? 0},
        ${size}, ${size}, '60000000', '6500000')
      returning id`
    const id = p?.id as string
    const res = await del(token, id)
    expect(res.statusCode, res.body).toBe(202)
    expect(res.json().action).toBe('close')
    const close = await jobOf('trading', 'position.close', id)
    expectJob(close, 'position.close', { positionId: id, userId })
    expect(close?.id).toBe(`${id}.close`)

    const w = (await post(token, '/positions', { asset: 'BTC', side: 'wheel', amount: '200' })).json()
    const stop = await del(token, w.wheelId)
    expect(stop.statusCode, stop.body).toBe(202)
    expect(stop.json()).toMatchObject({ action: 'stop', state: 'stopping' })
    expectJob(await jobOf('trading', 'wheel.stop', w.wheelId), 'wheel.stop', { wheelId: w.wheelId, userId })
  })

  it('POST /subaccounts/:asset/release: release.run on the treasury queue; a replayed key adds nothing', async () => {
    const { token, userId } = await fundedUser(api, usdc(10))
    await sql()`insert into subaccounts (user_id, asset) values (${userId}, 'ETH')`
    const key = { 'idempotency-key': `r-${randomUUID()}` }
    const res = await post(token, '/subaccounts/ETH/release', undefined, key)
    expect(res.statusCode, res.body).toBe(202)
    const id = res.json().id as string
    const job = await jobOf('treasury', 'release.run', id)
    expectJob(job, 'release.run', { releaseId: id, userId })
    expect(job?.id).toBe(id)
    expect((await post(token, '/subaccounts/ETH/release', undefined, key)).json().id).toBe(id)
    expect((await jobsNamed('treasury', 'release.run')).filter((j) => j.data.userId === userId)).toHaveLength(1)
  })

  it('POST /wheels/:id/resume: wheel.next-leg on the trading queue', async () => {
    const { token, userId } = await fundedUser(api, usdc(1000))
    const w = (await post(token, '/positions', { asset: 'ETH', side: 'wheel', amount: '300' })).json()
    expect((await del(token, w.wheelId, '?mode=now')).json()).toMatchObject({ state: 'stopped' })
    // 400 USDC in the subaccount, unclaimed (as after a leg expired out of the money)
    const exchangeId = 800_000 + Math.floor(Math.random() * 90_000)
    await sql()`update subaccounts set exchange_id = ${exchangeId} where user_id = ${userId} and asset = 'ETH'`
    await append(sql(), {
      type: 'subaccount_funded',
      payload: {
        userId,
        subaccountId: String(exchangeId),
        transactionId: randomUUID(),
        currency: 'USDC',
        amount: usdc(400),
      },
      occurredAt: new Date(),
    })
    const res = await post(token, `/wheels/${w.wheelId}/resume`)
    expect(res.statusCode, res.body).toBe(200)
    const job = await jobOf('trading', 'wheel.next-leg', w.wheelId)
    expectJob(job, 'wheel.next-leg', { wheelId: w.wheelId, userId })
    expect(job?.id).toBe(w.wheelId)
  })

  it('the job is added only once the row is committed: while the commit waits, no job and no row', async () => {
    const { token, userId } = await fundedUser(api, usdc(100))
    // the withdrawal's commit runs the deferred account-stream trigger, which bumps the user's event
    // counter (drizzle/0021_account_events.sql): holding that row holds the request between its
    // INSERT and its COMMIT
    await sql()`insert into account_event_seqs (user_id, seq) values (${userId}, 1000) on conflict do nothing`
    // a connection of its own (not the API's pool) holds the counter
    const other = createDatabase(api.ctx.ownerUrl, { max: 1 })
    let answer: Promise<{ statusCode: number; body: string; json(): { id: string } }> | undefined
    try {
      await other.sql.begin(async (holder) => {
        await holder`select seq from account_event_seqs where user_id = ${userId} for update`
        // sent now (an inject starts when it is awaited or then-ed)
        answer = Promise.resolve(
          post(token, '/withdrawals', { chain: 'base', asset: 'USDC', amount: '30', destination: DEST }),
        )
        await waitFor(async () => {
          // inside a transaction the statistics views are a snapshot taken once: cleared for each look
          await holder`select pg_stat_clear_snapshot()`
          const [w] = await holder<{ n: number }[]>`
            select count(*)::int as n from pg_stat_activity where pg_backend_pid() = any(pg_blocking_pids(pid))`
          return (w?.n ?? 0) > 0
        })
        const waiting = (await jobsNamed('withdrawals', 'withdrawal.send')).filter((j) => j.data.userId === userId)
        expect(waiting).toEqual([])
        expect(await sql()`select id from withdrawals where user_id = ${userId}`).toHaveLength(0)
        // the holder's transaction ends (rolled back: it changed nothing) and the request's commit goes on
      })
    } finally {
      await other.close()
    }
    if (!answer) throw new Error('the request was not sent')
    const res = await answer
    expect(res.statusCode, res.body).toBe(202)
    const id = res.json().id as string
    expect(await sql()`select id from withdrawals where id = ${id}`).toHaveLength(1)
    expect((await jobOf('withdrawals', 'withdrawal.send', id))?.data).toMatchObject({ withdrawalId: id, userId })
  })
})

describe('the desk links a row to its job', () => {
  it('a withdrawal, a position and a deposit: the job, its page in Bull Board and its state', async () => {
    const api = await startApi()
    const admin = await buildAdminServer({
      database: api.ctx.database,
      clients: new Map(),
      operators: { auth: { kind: 'password' }, approvalsRequired: 2 },
      logger: false,
      queues: api.queues,
    })
    try {
      const base = await admin.listen({ host: '127.0.0.1', port: 0 })
      const call = deskCaller(base)
      const pw = await makeOperators(api.ctx.ownerUrl, [{ name: 'vera', role: 'viewer' }])
      const token = await deskSignIn(base, 'vera', pw.vera as string)
      const { token: user, userId } = await fundedUser(api, 1_000_000_000n)
      const auth = { authorization: `Bearer ${user}` }
      const w = await api.app.inject({
        method: 'POST',
        url: '/withdrawals',
        headers: auth,
        payload: {
          chain: 'base',
          asset: 'USDC',
          amount: '25',
          destination: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
        },
      })
      const wid = w.json().id as string
      const desk = await call('GET', `/admin/withdrawals/${wid}`, { token })
      expect(desk.status, JSON.stringify(desk.body)).toBe(200)
      expect(desk.body).toMatchObject({ id: wid, userId, state: 'requested' })
      expect(desk.body.jobs).toEqual([
        {
          name: 'withdrawal.send',
          queue: '{withdrawals}',
          jobId: wid,
          path: `/admin/queues/queue/%7Bwithdrawals%7D/${wid}`,
          state: 'waiting',
        },
      ])

      const p = await api.app.inject({
        method: 'POST',
        url: '/positions',
        headers: auth,
        payload: { asset: 'ETH', side: 'put', amount: '300' },
      })
      const pid = p.json().id as string
      const pos = await call('GET', `/admin/positions/${pid}`, { token })
      expect(pos.status).toBe(200)
      expect(pos.body.jobs.map((j: { jobId: string; state: string }) => [j.jobId, j.state])).toEqual([
        [pid, 'waiting'],
        [`${pid}.cancel`, 'unknown'],
        [`${pid}.close`, 'unknown'],
      ])

      const txHash = `0x${randomUUID().replaceAll('-', '')}${randomUUID().replaceAll('-', '')}`
      const [d] = await api.ctx.database.sql<{ id: string }[]>`
        insert into deposits (chain, tx_hash, log_index, block_number, user_id, hd_index, address, token, amount, state)
        values ('base', ${txHash}, 0, 1, ${userId}, 1, ${'0x0000000000000000000000000000000000000001'}, 'USDC', 5, 'detected')
        returning id`
      const dep = await call('GET', `/admin/deposits/${d?.id}`, { token })
      expect(dep.status).toBe(200)
      expect(dep.body.jobs).toEqual([
        {
          name: 'deposit-sweep',
          queue: '{deposits}',
          jobId: `deposit-sweep.${d?.id}`,
          path: `/admin/queues/queue/%7Bdeposits%7D/deposit-sweep.${d?.id}`,
          state: 'unknown',
        },
      ])
      expect((await call('GET', `/admin/withdrawals/${randomUUID()}`, { token })).status).toBe(404)
      expect((await call('GET', `/admin/withdrawals/${wid}`)).status).toBe(401)
    } finally {
      await admin.close()
      await api.close()
    }
  })
})

describe('Redis refusing the job', () => {
  it('the request still answers its 202, the row is written, a warning is logged and counted', async () => {
    const api = await startApi()
    // the queues' connection points at a port nothing listens on: every add fails or times out
    const dead = new Redis(`redis://127.0.0.1:${await freePort()}`, {
      maxRetriesPerRequest: null,
      enableOfflineQueue: false,
      lazyConnect: true,
    })
    dead.on('error', () => {})
    const queues = Object.values(QUEUES).map((n) => new Queue(n, { connection: dead, prefix: `${BULL_PREFIX}-dead` }))
    for (const q of queues) q.on('error', () => {})
    const lines: string[] = []
    const app = await buildServer({
      config: api.ctx.config,
      database: api.ctx.database,
      redis: api.redis,
      keyring: api.keyring.publicOnly(),
      chains: new Map(),
      queues,
      logger: { level: 'warn', stream: { write: (l: string) => void lines.push(l) } },
    })
    try {
      const { token, userId } = await fundedUser(api, 100_000_000n)
      await api.ctx.database.sql`insert into subaccounts (user_id, asset) values (${userId}, 'ETH')`
      // the enqueue waits a bounded time (ENQUEUE_TIMEOUT_MS), not for Redis to come back: the answer comes
      const res = await app.inject({
        method: 'POST',
        url: '/subaccounts/ETH/release',
        headers: { authorization: `Bearer ${token}` },
      })
      expect(res.statusCode, res.body).toBe(202)
      const id = res.json().id as string
      const [row] = await api.ctx.database.sql<{ state: string }[]>`
        select state from subaccount_releases where id = ${id}`
      expect(row?.state).toBe('requested')
      const warned = lines.map((l) => JSON.parse(l)).find((l) => l.jobId === id)
      expect(warned).toMatchObject({ level: 40, job: 'release.run', msg: expect.stringContaining('not enqueued') })
      const metrics = await app.inject({ method: 'GET', url: '/metrics' })
      expect(metrics.body).toMatch(/wh_enqueue_failures_total\{job="release\.run"\} 1/)
    } finally {
      await app.close()
      await Promise.all(queues.map((q) => q.close().catch(() => {})))
      dead.disconnect()
      await api.close()
    }
  })
})

async function waitFor(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = performance.now() + timeoutMs
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error('condition not met in time')
    await new Promise((r) => setTimeout(r, 20))
  }
}
