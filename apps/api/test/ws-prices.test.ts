/**
 * WS /ws/prices over real sockets: two API instances (two buildServer) behind one price feed on the
 * Derive simulator, fanned out through real Redis pub/sub. Snapshot on connect, updates in sequence
 * order, subscribe/unsubscribe, heartbeats, malformed messages, a slow consumer dropped, and the
 * options of live positions (Postgres) in the updates while the positions live.
 */
import { randomUUID } from 'node:crypto'
import { toE18 } from '@wh/exchange'
import { marketNames, type PriceUpdate } from '@wh/market'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  connect,
  type MarketStack,
  type Msg,
  startMarketStack,
  type TestClient,
  waitFor,
  wsUrl,
} from './market-support'

const HEARTBEAT_MS = 150

describe('WS /ws/prices', () => {
  let stack: MarketStack
  let a: FastifyInstance
  let b: FastifyInstance
  const clients: TestClient[] = []
  const open = async (app: FastifyInstance, query = '') => {
    const c = await connect(wsUrl(app, query))
    clients.push(c)
    return c
  }
  const prices = (c: TestClient, asset?: string) =>
    c.messages.filter((m) => m.type === 'price' && (asset === undefined || m.asset === asset)) as PriceUpdate[]
  let price = 3000
  /** a fresh ETH price, distinct from every earlier one */
  const bumpEth = () => {
    price += 1
    stack.sim.control.setPrice('ETH', String(price))
    return String(price)
  }

  beforeAll(async () => {
    stack = await startMarketStack()
    a = await stack.startApp({ heartbeatMs: HEARTBEAT_MS })
    b = await stack.startApp({ heartbeatMs: 60_000 })
    await waitFor(async () => stack.feed.holding && (await stack.redis.get(stack.names.latest('BTC'))), 'the feed')
  })
  afterAll(async () => {
    for (const c of clients) c.close()
    await stack?.close()
  })

  it('on connect: a snapshot of the latest update per asset from Redis, then an ack', async () => {
    const c = await open(a)
    const snap = await c.next((m) => m.type === 'snapshot', 'snapshot')
    expect(snap.channel).toBe('prices')
    expect(snap.updates.map((u: PriceUpdate) => u.asset).sort()).toEqual(['BTC', 'ETH'])
    for (const u of snap.updates as PriceUpdate[]) {
      const cached = JSON.parse((await stack.redis.get(stack.names.latest(u.asset))) ?? '{}')
      expect(u.seq).toBeGreaterThanOrEqual(1)
      expect(u.seq).toBeLessThanOrEqual(cached.seq)
    }
    const ack = await c.next((m) => m.type === 'subscribed', 'ack')
    expect(ack.assets.sort()).toEqual(['BTC', 'ETH'])
    expect(c.messages.findIndex((m) => m.type === 'snapshot')).toBeLessThan(
      c.messages.findIndex((m) => m.type === 'subscribed'),
    )
  })

  it('updates arrive in sequence order, contiguous after the snapshot, with none repeated', async () => {
    const c = await open(a, '?assets=ETH')
    const snap = await c.next((m) => m.type === 'snapshot', 'snapshot')
    let last = ''
    for (let i = 0; i < 20; i++) last = bumpEth()
    await c.next((m) => m.type === 'price' && m.index === last, `ETH ${last}`)
    const seqs = prices(c, 'ETH').map((u) => u.seq)
    const first = snap.updates[0].seq as number
    // throttle 0 in this stack: every tick is an update, so the numbers run without gaps
    expect(seqs).toEqual(seqs.map((_, i) => first + 1 + i))
    expect(prices(c, 'BTC')).toEqual([]) // not asked for
  })

  it('subscribe and unsubscribe: a snapshot for what is added, nothing more of what is dropped', async () => {
    const c = await open(a, '?assets=BTC')
    await c.next((m) => m.type === 'subscribed', 'ack')
    c.send({ op: 'subscribe', assets: ['eth'] })
    const snaps = await waitFor(() => {
      const s = c.messages.filter((m) => m.type === 'snapshot')
      return s.length === 2 ? s : undefined
    }, 'the second snapshot')
    expect(snaps[1]?.updates.map((u: PriceUpdate) => u.asset)).toEqual(['ETH'])
    const ack = await c.next((m) => m.type === 'subscribed' && m.assets.length === 2, 'ack of both')
    expect(ack.assets.sort()).toEqual(['BTC', 'ETH'])
    const eth = bumpEth()
    await c.next((m) => m.type === 'price' && m.index === eth, 'ETH update')

    c.send({ op: 'unsubscribe', assets: ['ETH'] })
    const un = await c.next((m) => m.type === 'unsubscribed', 'unsubscribed')
    expect(un.assets).toEqual(['BTC'])
    const mark = c.messages.length
    const eth2 = bumpEth()
    stack.sim.control.setPrice('BTC', '91234') // published after ETH: when it arrives, ETH would have
    await c.next((m) => m.type === 'price' && m.asset === 'BTC' && m.index === '91234', 'BTC marker', mark)
    expect(c.messages.slice(mark).filter((m) => m.type === 'price' && m.asset === 'ETH')).toEqual([])
    expect(eth2).not.toBe(eth)
    // subscribing again to what is subscribed changes nothing and sends no snapshot
    c.send({ op: 'subscribe', assets: ['BTC'] })
    await c.next((m) => m.type === 'subscribed' && m.assets.length === 1, 'idempotent ack', mark)
    expect(c.messages.filter((m) => m.type === 'snapshot')).toHaveLength(2)
  })

  it('heartbeats arrive at the configured interval', async () => {
    const c = await open(a)
    await c.next((m) => m.type === 'heartbeat', 'a heartbeat')
    const t0 = Date.now()
    const count = c.messages.filter((m) => m.type === 'heartbeat').length
    await waitFor(() => c.messages.filter((m) => m.type === 'heartbeat').length >= count + 2, 'two more')
    expect(Date.now() - t0).toBeLessThan(HEARTBEAT_MS * 6)
    c.send({ op: 'ping' })
    await c.next((m) => m.type === 'pong', 'pong')
  })

  it('malformed messages get an error message; the connection and the server keep serving', async () => {
    const c = await open(a, '?assets=ETH')
    await c.next((m) => m.type === 'subscribed', 'ack')
    const errors = () => c.messages.filter((m) => m.type === 'error') as Msg[]
    c.send('not json')
    c.send({ op: 'subscribe' })
    c.send({ op: 'dance', assets: ['ETH'] })
    c.send({ op: 'subscribe', assets: ['DOGE'] })
    c.send(JSON.stringify({ op: 'subscribe', assets: ['ETH'], pad: 'x'.repeat(2_000) }))
    c.ws.send(Buffer.from([1, 2, 3]), { binary: true })
    await waitFor(() => errors().length === 6, 'six errors')
    expect(errors().map((e) => e.code)).toEqual([
      'MALFORMED_MESSAGE',
      'MALFORMED_MESSAGE',
      'MALFORMED_MESSAGE',
      'UNKNOWN_ASSET',
      'MESSAGE_TOO_LARGE',
      'MALFORMED_MESSAGE',
    ])
    expect(c.closed).toBe(false)
    const eth = bumpEth()
    await c.next((m) => m.type === 'price' && m.index === eth, 'still receiving')
    const bad = await open(a, '?assets=DOGE')
    await bad.next((m) => m.type === 'error' && m.code === 'UNKNOWN_ASSET', 'error for the query')
    const http = await a.inject({ method: 'GET', url: '/ws/prices' })
    expect(http.statusCode).toBe(426)
    expect(http.json().code).toBe('UPGRADE_REQUIRED')
  })

  it('two API instances serve their clients from the one feed, each in order', async () => {
    const ca = await open(a, '?assets=ETH')
    const cb = await open(b, '?assets=ETH')
    await Promise.all([ca, cb].map((c) => c.next((m) => m.type === 'subscribed', 'ack')))
    let last = ''
    for (let i = 0; i < 5; i++) last = bumpEth()
    const [ua, ub] = await Promise.all(
      [ca, cb].map((c) => c.next((m) => m.type === 'price' && m.index === last, `ETH ${last}`)),
    )
    expect(ua).toEqual(ub) // byte-for-byte the feed's message, same sequence number
    for (const c of [ca, cb]) {
      const seqs = prices(c, 'ETH').map((u) => u.seq)
      expect(seqs).toEqual([...seqs].sort((x, y) => x - y))
      expect(new Set(seqs).size).toBe(seqs.length)
    }
    expect(a.fanout.clientCount).toBeGreaterThan(0)
    expect(b.fanout.clientCount).toBeGreaterThan(0)
  })

  it('a slow consumer is dropped; a reading client on the same instance gets every update in order', async () => {
    // an instance and namespace of its own, fed directly through Redis so the flood is controlled
    const names = marketNames(`slow-${Date.now()}:`)
    const app = await stack.startApp({ names, maxBufferedBytes: 64 * 1024, heartbeatMs: 60_000 })
    const fast = await open(app, '?assets=ETH')
    const slow = await open(app, '?assets=ETH')
    await Promise.all([fast, slow].map((c) => c.next((m) => m.type === 'subscribed', 'ack')))
    // the slow client stops reading: its kernel buffers fill, then the server's send buffer
    ;(slow.ws as unknown as { _socket: { pause(): void } })._socket.pause()
    const N = 6_000
    const CHUNK = 500
    const pad = 'x'.repeat(3_000)
    // in chunks the reading client keeps up with (even on a busy machine); the paused one piles up
    // ~18 MB, more than the kernel's socket buffers plus the server's limit
    for (let from = 1; from <= N; from += CHUNK) {
      const pipeline = stack.redis.pipeline()
      for (let seq = from; seq < from + CHUNK; seq++)
        pipeline.publish(
          names.priceChannel('ETH'),
          `{"type":"price","asset":"ETH","seq":${seq},"ts":"2026-01-05T09:00:00.000Z","index":"${seq}","mark":"1","atmIv":null,"instruments":[],"pad":"${pad}"}`,
        )
      await pipeline.exec()
      await waitFor(() => prices(fast).length === from + CHUNK - 1, `${from + CHUNK - 1} updates on the fast client`)
    }
    expect(prices(fast).map((u) => u.seq)).toEqual(Array.from({ length: N }, (_, i) => i + 1))
    await waitFor(() => app.fanout.dropped >= 1, 'the slow client dropped')
    ;(slow.ws as unknown as { _socket: { resume(): void } })._socket.resume()
    await waitFor(() => slow.closed, 'the slow client sees its connection closed')
    expect(prices(slow).length).toBeLessThan(N)
    expect(fast.closed).toBe(false)
  })

  it("a live position's option is in the updates with its bid, ask, mark, IV and delta, and leaves them when the position ends", async () => {
    // a put of the third expiry (the ATM ones followed anyway are of the two nearest), ~10 % below the index
    const options = await stack.exchange.getInstruments({ currency: 'ETH', instrument_type: 'option' })
    const expiries = [...new Set(options.map((o) => o.option_details?.expiry ?? 0))]
      .filter((e) => e * 1000 > stack.sim.control.nowMs() + 3_600_000)
      .sort((x, y) => x - y)
    const targetE18 = (toE18(String(price)) * 9n) / 10n
    const gap = (strike: string) => {
      const d = toE18(strike) - targetE18
      return d < 0n ? -d : d
    }
    const put = options
      .filter((o) => o.option_details?.expiry === expiries[2] && o.option_details?.option_type === 'P')
      .reduce((best, o) => (gap(o.option_details?.strike ?? '0') < gap(best.option_details?.strike ?? '0') ? o : best))
    const instrument = put.instrument_name
    const c = await open(a, '?assets=ETH')
    await c.next((m) => m.type === 'subscribed', 'ack')
    const inUpdate = (m: Msg) => m.type === 'price' && (m as PriceUpdate).instruments.find((i) => i.name === instrument)
    expect(c.messages.some(inUpdate)).toBe(false)

    const [row] = await stack.ctx.database.sql<{ id: string }[]>`
      insert into positions (user_id, asset, side, subaccount_id, state, collateral_currency, collateral_amount,
        instrument, strike_e18, expiry_sec)
      values (${randomUUID()}, 'ETH', 'put', ${randomUUID()}, 'placing', 'USDC', '1000000000', ${instrument},
        ${toE18(put.option_details?.strike ?? '0').toString()}, ${put.option_details?.expiry ?? 0})
      returning id`
    const first = await c.next((m) => Boolean(inUpdate(m)), `${instrument} in an update`)
    const ticker = await stack.exchange.getTicker(instrument)
    expect(inUpdate(first)).toEqual({
      name: instrument,
      kind: 'option',
      strike: put.option_details?.strike,
      expiry: new Date((put.option_details?.expiry ?? 0) * 1000).toISOString(),
      optionType: 'P',
      bid: ticker.best_bid_price,
      ask: ticker.best_ask_price,
      mark: ticker.mark_price,
      iv: ticker.option_pricing?.iv,
      delta: ticker.option_pricing?.delta,
    })
    expect(toE18(ticker.best_ask_price)).toBeGreaterThan(0n)
    expect(ticker.option_pricing?.delta).toMatch(/^-0\.\d*[1-9]/)
    // the cached latest (the next client's snapshot) carries it too
    const later = await open(b, '?assets=ETH')
    const snap = await later.next((m) => m.type === 'snapshot', 'snapshot')
    expect(snap.updates[0].instruments.map((i: { name: string }) => i.name)).toContain(instrument)

    // the position ends: the next refresh drops the option, and an update without it goes out
    await stack.ctx.database.sql`update positions set state = 'cancelled' where id = ${row?.id as string}`
    const from = c.messages.length
    await c.next((m) => m.type === 'price' && !inUpdate(m), `an update without ${instrument}`, from)
    const eth = bumpEth()
    const next = await c.next((m) => m.type === 'price' && m.index === eth, `ETH ${eth}`, from)
    expect(inUpdate(next)).toBeUndefined()
  })
})
