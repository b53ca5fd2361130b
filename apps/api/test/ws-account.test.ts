/**
 * WS /ws/account over real sockets, on real Postgres (migration 0021's triggers, LISTEN/NOTIFY) and
 * Redis: the token by first message and by subprotocol, never by query; events in `seq` order as
 * rows change through the domain (POST /withdrawals) and through SQL as the worker writes them; a
 * reconnect with `fromSeq` gets exactly the missed events; two API instances, each with its own
 * database pool and LISTEN, both deliver; another user's events never arrive (docs/account-stream.md).
 */
import { randomBytes } from 'node:crypto'
import { openAccountStream, type WebSocketLike } from '@wh/client'
import { createDatabase, type Database } from '@wh/db'
import { append } from '@wh/ledger'
import { buildChainRegistry } from '@wh/wallet'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { buildServer } from '../src/server'
import { type Msg, waitFor } from './market-support'
import { type Api, newAccount, signIn, startApi } from './support'

const DEST = '0x52908400098527886E0F7030069857D2E4169EE7'
const AUTH_TIMEOUT_MS = 300

interface Client {
  ws: WebSocket
  messages: Msg[]
  closed?: { code: number; reason: string }
  send(m: unknown): void
  next(pred: (m: Msg) => boolean, what: string): Promise<Msg>
  events(): Msg[]
}

function url(app: FastifyInstance, query = ''): string {
  const addr = app.server.address()
  if (!addr || typeof addr === 'string') throw new Error('not listening')
  return `ws://127.0.0.1:${addr.port}/ws/account${query}`
}

async function open(target: string, protocols?: string[]): Promise<Client> {
  const ws = new WebSocket(target, protocols)
  const c: Client = {
    ws,
    messages: [],
    send: (m) => ws.send(typeof m === 'string' ? m : JSON.stringify(m)),
    next: (pred, what) => waitFor(() => c.messages.find(pred), what),
    events: () => c.messages.filter((m) => m.type === 'event'),
  }
  ws.on('message', (data) => c.messages.push(JSON.parse(String(data))))
  ws.on('close', (code, reason) => {
    c.closed = { code, reason: String(reason) }
  })
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve())
    ws.once('error', reject)
  })
  return c
}

describe('WS /ws/account', () => {
  let api: Api
  let b: FastifyInstance
  let bDb: Database
  const clients: Client[] = []

  /** A connection of `token`'s user to `app`, authenticated by its first message and subscribed. */
  async function subscribed(app: FastifyInstance, token: string, fromSeq?: number) {
    const c = await open(url(app))
    clients.push(c)
    c.send({ type: 'auth', token })
    await c.next((m) => m.type === 'authenticated', 'authenticated')
    c.send(fromSeq === undefined ? { type: 'subscribe' } : { type: 'subscribe', fromSeq })
    await c.next((m) => m.type === (fromSeq === undefined ? 'snapshot' : 'replayed'), 'start')
    return c
  }

  /** A signed-in user holding 1,000 USDC in transit. */
  async function user() {
    const account = newAccount()
    const token = await signIn(api.app, account)
    const sql = api.ctx.database.sql
    const [row] = await sql<{ id: string }[]>`select id from users where wallet_address = ${account.address}`
    const userId = row?.id as string
    const txHash = `0x${randomBytes(32).toString('hex')}`
    await append(sql, {
      type: 'deposit_detected',
      payload: { userId, chain: 'base', txHash, logIndex: 1, currency: 'USDC', amount: 1_000_000_000n },
      occurredAt: new Date(),
    })
    return { userId, token, auth: { authorization: `Bearer ${token}` } }
  }

  /** A deposit row as the scanner inserts it (the trigger makes it a `deposit.credited`). */
  const depositRow = (userId: string, amount: bigint) => api.ctx.database.sql`
    insert into deposits (chain, tx_hash, log_index, block_number, user_id, hd_index, address, token, amount, state)
    values ('base', ${`0x${randomBytes(32).toString('hex')}`}, 0, 1, ${userId}, 0, ${DEST}, 'USDC', ${amount.toString()}, 'detected')`

  const withdraw = async (auth: Record<string, string>, amount: string) => {
    const res = await api.app.inject({
      method: 'POST',
      url: '/withdrawals',
      headers: auth,
      payload: { chain: 'base', asset: 'USDC', amount, destination: DEST },
    })
    expect(res.statusCode, res.body).toBe(202)
    return res.json().id as string
  }

  beforeAll(async () => {
    api = await startApi({}, { authTimeoutMs: AUTH_TIMEOUT_MS })
    await api.seedPrice('ETH', '3000')
    await api.app.listen({ port: 0, host: '127.0.0.1' })
    // a second API instance on the same database, with its own pool and its own LISTEN connection
    bDb = createDatabase(api.ctx.config.databaseUrl, { max: 4 })
    b = await buildServer({
      config: api.ctx.config,
      database: bDb,
      redis: api.redis,
      keyring: api.keyring.publicOnly(),
      chains: buildChainRegistry(api.ctx.config),
      clock: api.clock,
      logger: false,
      marketData: { names: api.names },
    })
    await b.listen({ port: 0, host: '127.0.0.1' })
  })
  afterAll(async () => {
    for (const c of clients) c.ws.terminate()
    await b?.close()
    await bDb?.close()
    await api?.close()
  })

  it('authenticates by the first message; the snapshot carries balances, legs, wheels and the last seq', async () => {
    const { token, userId } = await user()
    const c = await subscribed(api.app, token)
    // amounts on this stream are base units, and every message carrying them says so (docs/account-stream.md "Amounts")
    const units = { unit: 'base_units', decimals: { USDC: 6, ETH: 18, BTC: 8 } }
    expect(c.messages[0]).toEqual({ type: 'authenticated', userId, ...units })
    const snap = c.messages.find((m) => m.type === 'snapshot') as Msg
    expect(snap).toEqual({
      type: 'snapshot',
      ...units,
      seq: 0,
      balances: [{ account: 'transit', currency: 'USDC', amount: '1000000000' }],
      positions: [],
      wheels: [],
    })
  })

  it('authenticates by the Sec-WebSocket-Protocol header (wh.bearer, token), echoing only wh.bearer', async () => {
    const { token, userId } = await user()
    const c = await open(url(api.app), ['wh.bearer', token])
    clients.push(c)
    expect(c.ws.protocol).toBe('wh.bearer')
    await c.next((m) => m.type === 'authenticated' && m.userId === userId, 'authenticated')
    c.send({ type: 'subscribe' })
    await c.next((m) => m.type === 'snapshot', 'snapshot')
  })

  it('refuses a token in the query string (4400), a bad token (4401) and silence (4408)', async () => {
    const { token } = await user()
    const q = await open(url(api.app, `?token=${token}`))
    await waitFor(() => q.closed, 'query close')
    expect(q.closed?.code).toBe(4400)
    expect(q.messages).toEqual([])

    const bad = await open(url(api.app))
    bad.send({ type: 'auth', token: `${token.slice(0, -4)}AAAA` })
    await waitFor(() => bad.closed, 'bad token close')
    expect(bad.closed?.code).toBe(4401)

    const badProtocol = await open(url(api.app), ['wh.bearer', 'not.a.jwt'])
    await waitFor(() => badProtocol.closed, 'bad protocol close')
    expect(badProtocol.closed?.code).toBe(4401)

    const silent = await open(url(api.app))
    silent.send({ type: 'subscribe' })
    await silent.next((m) => m.type === 'error' && m.code === 'NOT_AUTHENTICATED', 'not authenticated')
    await waitFor(() => silent.closed, 'timeout close')
    expect(silent.closed?.code).toBe(4408)
  })

  it('closes 4401 when the token expires while connected', async () => {
    const { userId } = await user()
    const short = api.app.jwt.sign({ sub: userId }, { expiresIn: '1s' })
    const c = await open(url(api.app), ['wh.bearer', short])
    clients.push(c)
    await c.next((m) => m.type === 'authenticated', 'authenticated')
    await waitFor(() => c.closed, 'expiry close', 5_000)
    expect(c.closed).toEqual({ code: 4401, reason: 'the token expired: connect again with a new one' })
  })

  it('sends events in seq order as rows change: deposit, withdrawal requested, sent, confirmed', async () => {
    const { token, userId, auth } = await user()
    const c = await subscribed(api.app, token)
    await depositRow(userId, 5_000_000n)
    const id = await withdraw(auth, '25')
    const sql = api.ctx.database.sql
    const hash = `0x${'ab'.repeat(32)}`
    await sql`update withdrawals set tx_hash = ${hash}, updated_at = now() where id = ${id}`
    await sql`update withdrawals set state = 'sent', sent_at = now() where id = ${id}`
    await waitFor(() => c.events().length >= 4, 'four events')
    const events = c.events()
    expect(events.map((e) => [e.seq, e.kind])).toEqual([
      [1, 'deposit.credited'],
      [2, 'withdrawal.requested'],
      [3, 'withdrawal.sent'],
      [4, 'withdrawal.confirmed'],
    ])
    expect(events[0]?.data).toMatchObject({ currency: 'USDC', amount: '5000000', chain: 'base' })
    expect(events[1]?.data).toEqual({
      withdrawalId: id,
      state: 'requested',
      chain: 'base',
      currency: 'USDC',
      amount: '25000000',
      destination: DEST,
    })
    expect(events[2]?.data).toMatchObject({ withdrawalId: id, state: 'requested', txHash: hash })
    expect(events[3]?.data).toMatchObject({ withdrawalId: id, state: 'sent', txHash: hash })
    expect(Date.parse(events[3]?.at)).toBeGreaterThan(0)
  })

  it('legs, orders, fills, settlements, wheels, decisions, conversions and stops are events too', async () => {
    const { token, userId } = await user()
    const c = await subscribed(api.app, token)
    const sql = api.ctx.database.sql
    const [sub] = await sql<{ id: string }[]>`
      insert into subaccounts (user_id, asset) values (${userId}, 'ETH') returning id`
    const subId = sub?.id as string
    const [wheel] = await sql<{ id: string }[]>`
      insert into wheels (user_id, asset, subaccount_id, state) values (${userId}, 'ETH', ${subId}, 'running') returning id`
    const wheelId = wheel?.id as string
    const [pos] = await sql<{ id: string }[]>`
      insert into positions (user_id, asset, side, wheel_id, subaccount_id, state, collateral_currency, collateral_amount)
      values (${userId}, 'ETH', 'put', ${wheelId}, ${subId}, 'requested', 'USDC', '2700000000') returning id`
    const positionId = pos?.id as string
    await sql`update positions set state = 'funding' where id = ${positionId}`
    await sql`update positions set state = 'placing', instrument = 'ETH-20260109-2700-P' where id = ${positionId}`
    await sql`update positions set order_id = 'o-1', size_e18 = '1000000000000000000' where id = ${positionId}`
    // an update the stream does not show (a reprice time) is no event
    await sql`update positions set next_reprice_at = now() where id = ${positionId}`
    await sql`
      insert into position_fills (trade_id, position_id, user_id, subaccount_id, amount_e18, price_e18, premium,
        exchange_fee, platform_fee, traded_at)
      values (${`t-${positionId}`}, ${positionId}, ${userId}, ${subId}, '1000000000000000000', '31000000000000000000',
        '31000000', '100000', '310000', now())`
    await sql`update positions set state = 'open', filled_e18 = '1000000000000000000' where id = ${positionId}`
    await sql`update positions set state = 'settled', outcome = 'itm', settlement_cost = '5000000' where id = ${positionId}`
    await sql`
      insert into conversions (wheel_id, position_id, user_id, subaccount_id, asset, direction, trigger, state,
        sell_currency, buy_currency)
      values (${wheelId}, ${positionId}, ${userId}, ${subId}, 'ETH', 'to_underlying', 'after_settlement', 'planned',
        'USDC', 'ETH')`
    await sql`
      insert into wheel_decisions (wheel_id, user_id, position_id, kind, reason, facts)
      values (${wheelId}, ${userId}, ${positionId}, 'skipped', 'deadline_passed', '{}'::jsonb)`
    await sql`update wheels set state = 'stopping', stop_mode = 'after_cycle' where id = ${wheelId}`
    await sql`update subaccounts set stopped_at = now(), stop_reason = 'reconciliation: balance differs' where id = ${subId}`
    const kinds = [
      'wheel.state',
      'position.state',
      'position.state',
      'position.funded',
      'order.placed',
      'fill',
      'position.state',
      'position.settled',
      'conversion',
      'wheel.decision',
      'wheel.state',
      'subaccount.stopped',
    ]
    await waitFor(() => c.events().length >= kinds.length, 'every event')
    const events = c.events()
    expect(events.map((e) => e.kind)).toEqual(kinds)
    expect(events.map((e) => e.seq)).toEqual(kinds.map((_, i) => i + 1))
    expect(events[2]?.data).toMatchObject({ positionId, state: 'funding', from: 'requested' })
    expect(events[4]?.data).toMatchObject({ positionId, orderId: 'o-1', sizeE18: '1000000000000000000' })
    expect(events[5]?.data).toMatchObject({ positionId, premium: '31000000', platformFee: '310000' })
    expect(events[7]?.data).toMatchObject({ state: 'settled', outcome: 'itm', settlementCost: '5000000' })
    expect(events[8]?.data).toMatchObject({ direction: 'to_underlying', state: 'planned', sellCurrency: 'USDC' })
    expect(events[9]?.data).toMatchObject({ wheelId, positionId, kind: 'skipped', reason: 'deadline_passed' })
    expect(events[10]?.data).toMatchObject({ wheelId, state: 'stopping', from: 'running', stopMode: 'after_cycle' })
    expect(events[11]?.data).toMatchObject({ subaccountId: subId, reason: 'reconciliation: balance differs' })
    // the account_events rows are append-only
    await expect(sql`update account_events set kind = 'x' where user_id = ${userId}`).rejects.toThrow()
  })

  it('allocates one user’s seq without gaps under concurrent transactions', async () => {
    const { token, userId } = await user()
    const c = await subscribed(api.app, token)
    await Promise.all(Array.from({ length: 20 }, (_, i) => depositRow(userId, BigInt(i + 1))))
    await waitFor(() => c.events().length >= 20, 'twenty events')
    expect(c.events().map((e) => e.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1))
    const rows = await api.ctx.database.sql<{ seq: string }[]>`
      select seq from account_events where user_id = ${userId} order by seq`
    expect(rows.map((r) => Number(r.seq))).toEqual(Array.from({ length: 20 }, (_, i) => i + 1))
  })

  it('a reconnect with fromSeq gets exactly the missed events, then live ones', async () => {
    const { token, userId } = await user()
    const first = await subscribed(api.app, token)
    await depositRow(userId, 1n)
    await depositRow(userId, 2n)
    await waitFor(() => first.events().length >= 2, 'two events')
    const last = first.events().at(-1)?.seq as number
    first.ws.close()
    await waitFor(() => first.closed, 'closed')
    for (const n of [3n, 4n, 5n]) await depositRow(userId, n)

    const again = await subscribed(b, token, last)
    const replayed = again.messages.find((m) => m.type === 'replayed') as Msg
    expect(replayed).toEqual({ type: 'replayed', fromSeq: 2, seq: 5 })
    expect(again.events().map((e) => [e.seq, e.data.amount])).toEqual([
      [3, '3'],
      [4, '4'],
      [5, '5'],
    ])
    await depositRow(userId, 6n)
    await waitFor(() => again.events().length >= 4, 'live event')
    expect(again.events().map((e) => e.seq)).toEqual([3, 4, 5, 6])
  })

  it('asks for a resnapshot when fromSeq cannot be replayed', async () => {
    const { token } = await user()
    const c = await open(url(api.app))
    clients.push(c)
    c.send({ type: 'auth', token })
    c.send({ type: 'subscribe', fromSeq: 7 })
    const msg = await c.next((m) => m.type === 'resnapshot', 'resnapshot')
    expect(msg).toMatchObject({ reason: 'ahead', latestSeq: 0 })
    // the connection stays open: a subscribe without fromSeq takes the snapshot
    c.send({ type: 'subscribe' })
    await c.next((m) => m.type === 'snapshot', 'snapshot')
  })

  it('asks for a resnapshot when the gap is over 1,000 events or its first event is over a day old', async () => {
    const { token, userId } = await user()
    const resume = async (fromSeq: number) => {
      const c = await open(url(api.app))
      clients.push(c)
      c.send({ type: 'auth', token })
      c.send({ type: 'subscribe', fromSeq })
      return c.next((m) => m.type === 'resnapshot' || m.type === 'replayed', 'an answer')
    }
    await api.ctx.database.sql`
      insert into deposits (chain, tx_hash, log_index, block_number, user_id, hd_index, address, token, amount, state)
      select 'base', '0x' || lpad(to_hex(n), 64, '0'), n, 1, ${userId}, 0, ${DEST}, 'USDC', n, 'detected'
      from generate_series(1, 1001) as n`
    expect(await resume(0)).toMatchObject({ type: 'resnapshot', reason: 'too_many', latestSeq: 1001 })
    expect(await resume(1)).toEqual({ type: 'replayed', fromSeq: 1, seq: 1001 })
    api.clock.advance(25 * 60 * 60 * 1000)
    try {
      expect(await resume(1)).toMatchObject({ type: 'resnapshot', reason: 'too_old', latestSeq: 1001 })
    } finally {
      api.clock.advance(-25 * 60 * 60 * 1000)
    }
  })

  it('two API instances both deliver; another user’s events never arrive', async () => {
    const alice = await user()
    const bob = await user()
    const onA = await subscribed(api.app, alice.token)
    const onB = await subscribed(b, alice.token)
    const bobOnA = await subscribed(api.app, bob.token)
    const bobOnB = await subscribed(b, bob.token)
    await depositRow(alice.userId, 11n)
    await withdraw(alice.auth, '12')
    await depositRow(bob.userId, 13n)
    for (const c of [onA, onB]) {
      await waitFor(() => c.events().length >= 2, 'alice on both')
      expect(c.events().map((e) => [e.seq, e.kind])).toEqual([
        [1, 'deposit.credited'],
        [2, 'withdrawal.requested'],
      ])
    }
    for (const c of [bobOnA, bobOnB]) {
      await waitFor(() => c.events().length >= 1, 'bob')
      expect(c.events().map((e) => [e.seq, e.data.amount])).toEqual([[1, '13']])
    }
    // nothing of alice's reached bob, on either instance
    await depositRow(bob.userId, 14n)
    await waitFor(() => bobOnB.events().length >= 2, 'bob again')
    for (const c of [bobOnA, bobOnB]) expect(c.events().every((e) => e.data.amount !== '11')).toBe(true)
  })

  it('events committed while the LISTEN connection is down arrive once it is back', async () => {
    const { token, userId } = await user()
    const c = await subscribed(api.app, token)
    const owner = createDatabase(api.ctx.ownerUrl, { max: 1 })
    try {
      const killed = await owner.sql<{ pid: number }[]>`
        select pg_terminate_backend(pid), pid from pg_stat_activity
        where datname = current_database() and query ilike 'listen%'`
      expect(killed.length).toBeGreaterThanOrEqual(1)
      await depositRow(userId, 7n)
      await waitFor(() => c.events().length >= 1, 'the event after the LISTEN came back')
      expect(c.events().map((e) => [e.seq, e.data.amount])).toEqual([[1, '7']])
    } finally {
      await owner.close()
    }
  })

  it('the same seq is never sent twice to two sockets of one user on one instance (one read per wake)', async () => {
    const { token, userId } = await user()
    const one = await subscribed(api.app, token)
    const two = await subscribed(api.app, token)
    const reads = api.app.accountStreams.stats.reads
    for (let i = 1n; i <= 5n; i++) await depositRow(userId, i)
    await waitFor(() => one.events().length >= 5 && two.events().length >= 5, 'both')
    expect(one.events().map((e) => e.seq)).toEqual([1, 2, 3, 4, 5])
    expect(two.events().map((e) => e.seq)).toEqual([1, 2, 3, 4, 5])
    // at most one read per notification, whatever the number of sockets
    expect(api.app.accountStreams.stats.reads - reads).toBeLessThanOrEqual(5)
  })

  it('@wh/client openAccountStream resumes after the server drops it: every event once, in order', async () => {
    const { token, userId } = await user()
    const seen: number[] = []
    const stream = openAccountStream({
      baseUrl: `http://127.0.0.1:${(api.app.server.address() as { port: number }).port}`,
      token,
      connect: (u) => new WebSocket(u) as unknown as WebSocketLike,
      onEvent: (e) => seen.push(e.seq),
      initialDelayMs: 50,
    })
    try {
      await waitFor(() => stream.lastSeq === 0, 'the snapshot')
      await depositRow(userId, 1n)
      await depositRow(userId, 2n)
      await waitFor(() => seen.length >= 2, 'two events')
      // the server drops every connection of this instance (as a restart or a slow-reader drop would)
      for (const c of [...api.app.fanout.clients()]) c.terminate()
      for (const n of [3n, 4n, 5n]) await depositRow(userId, n)
      await waitFor(() => seen.length >= 5, 'the missed events')
      await depositRow(userId, 6n)
      await waitFor(() => seen.length >= 6, 'a live event')
      expect(seen).toEqual([1, 2, 3, 4, 5, 6])
      expect(stream.stats.reconnects).toBeGreaterThanOrEqual(1)
      expect(stream.stats.gaps).toBe(0)
    } finally {
      stream.close()
    }
  })
})
