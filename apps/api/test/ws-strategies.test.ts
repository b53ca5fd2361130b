/**
 * WS /ws/strategies over real sockets: two API instances (two buildServer) behind one Redis, the
 * trading steps' publisher (@wh/market's strategyEvents) and the signals route publishing strategy
 * events through real pub/sub. Snapshot on connect and on subscribe, events in sequence order on
 * both instances, subscribe/unsubscribe, malformed messages, heartbeats, pause/resume.
 */
import { type StrategyPublisher, strategyEvents, strategyNames } from '@wh/market'
import { signalSignature } from '@wh/trading'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connect, type MarketStack, type Msg, startMarketStack, type TestClient, waitFor } from './market-support'

const HEARTBEAT_MS = 150

function url(app: FastifyInstance, query = ''): string {
  const addr = app.server.address()
  if (!addr || typeof addr === 'string') throw new Error('not listening')
  return `ws://127.0.0.1:${addr.port}/ws/strategies${query}`
}

describe('WS /ws/strategies', () => {
  let stack: MarketStack
  let a: FastifyInstance
  let b: FastifyInstance
  let events: StrategyPublisher
  const clients: TestClient[] = []
  const open = async (app: FastifyInstance, query = '') => {
    const c = await connect(url(app, query))
    clients.push(c)
    return c
  }
  const ofAsset = (c: TestClient, asset: string) => c.messages.filter((m) => m.type === 'strategy' && m.asset === asset)
  let n = 0
  /** one `order` event on `asset`, distinct by its price */
  const publish = async (asset: string) => {
    n++
    await events.publish(asset, {
      ts: new Date().toISOString(),
      event: 'order',
      strategy: 'put',
      instrument: `${asset}-20260107-2800-P`,
      step: 'repriced',
      price: `${n}`,
    })
    return `${n}`
  }

  beforeAll(async () => {
    stack = await startMarketStack()
    a = await stack.startApp({ heartbeatMs: HEARTBEAT_MS })
    b = await stack.startApp({ heartbeatMs: 60_000 })
    events = strategyEvents(stack.redis, stack.names)
    await waitFor(async () => stack.feed.holding && (await stack.redis.get(stack.names.latest('BTC'))), 'the feed')
  })
  afterAll(async () => {
    for (const c of clients) c.close()
    await stack?.close()
  })

  it('on connect: a snapshot of every asset’s strategies and signals, then an ack', async () => {
    await publish('ETH')
    const c = await open(a)
    const snap = await c.next((m) => m.type === 'snapshot', 'snapshot')
    expect(snap.channel).toBe('strategies')
    expect(snap.states.map((s: Msg) => s.asset).sort()).toEqual(['BTC', 'ETH'])
    const eth = snap.states.find((s: Msg) => s.asset === 'ETH')
    expect(eth).toMatchObject({ type: 'strategy_state', signals: { put: 'active', call: 'active' } })
    expect(eth.seq).toBe(Number(await stack.redis.get(strategyNames(stack.names).seq('ETH'))))
    expect(eth.strategies.map((s: Msg) => s.id)).toEqual(['eth-wheel', 'eth-put', 'eth-call'])
    // the feed caches at-the-money options only: nothing near the 0.20 target, and it says so
    expect(eth.strategies[1]).toMatchObject({ liveCycles: 0, currentCycle: null })
    expect(eth.strategies[1].currentCycleNote).toMatch(/at-the-money/)
    const ack = await c.next((m) => m.type === 'subscribed', 'ack')
    expect(ack).toMatchObject({ channel: 'strategies' })
    expect(ack.assets.sort()).toEqual(['BTC', 'ETH'])
  })

  it('events arrive in sequence order on both API instances, contiguous after the snapshot', async () => {
    const onA = await open(a, '?assets=ETH')
    const onB = await open(b, '?assets=ETH')
    const snapA = await onA.next((m) => m.type === 'snapshot', 'snapshot a')
    const snapB = await onB.next((m) => m.type === 'snapshot', 'snapshot b')
    let last = ''
    for (let i = 0; i < 20; i++) last = await publish('ETH')
    for (const [c, snap] of [
      [onA, snapA],
      [onB, snapB],
    ] as const) {
      await c.next((m) => m.type === 'strategy' && m.price === last, `ETH event ${last}`)
      const seqs = ofAsset(c, 'ETH').map((m) => m.seq)
      const first = snap.states[0].seq as number
      expect(seqs).toEqual(seqs.map((_, i) => first + 1 + i))
      expect(seqs).toHaveLength(20)
    }
    expect(ofAsset(onA, 'BTC')).toEqual([])
  })

  it('subscribe adds an asset with its snapshot; unsubscribe stops its events', async () => {
    const c = await open(b, '?assets=ETH')
    await c.next((m) => m.type === 'subscribed', 'ack')
    await publish('BTC')
    c.send({ op: 'subscribe', assets: ['btc'] })
    const ack = await c.next((m) => m.type === 'subscribed' && m.assets.includes('BTC'), 'btc ack')
    expect(ack.assets.sort()).toEqual(['BTC', 'ETH'])
    const snaps = c.messages.filter((m) => m.type === 'snapshot')
    expect(snaps[1]?.states.map((s: Msg) => s.asset)).toEqual(['BTC'])
    const btc = await publish('BTC')
    await c.next((m) => m.type === 'strategy' && m.asset === 'BTC' && m.price === btc, 'btc event')
    c.send({ op: 'unsubscribe', assets: ['ETH'] })
    await c.next((m) => m.type === 'unsubscribed', 'unsub ack')
    const before = ofAsset(c, 'ETH').length
    await publish('ETH')
    const marker = await publish('BTC')
    await c.next((m) => m.type === 'strategy' && m.price === marker, 'marker')
    expect(ofAsset(c, 'ETH')).toHaveLength(before)
  })

  it('malformed messages get an error message and the connection stays open', async () => {
    const c = await open(a, '?assets=ETH')
    await c.next((m) => m.type === 'subscribed', 'ack')
    c.send('not json')
    c.send({ op: 'dance' })
    c.send({ op: 'subscribe', assets: ['DOGE'] })
    c.send(`{"op":"ping","pad":"${'x'.repeat(2_000)}"}`)
    c.ws.send(Buffer.from([1, 2, 3]), { binary: true })
    await waitFor(() => c.messages.filter((m) => m.type === 'error').length >= 5, 'five errors')
    expect(c.messages.filter((m) => m.type === 'error').map((m) => m.code)).toEqual([
      'MALFORMED_MESSAGE',
      'MALFORMED_MESSAGE',
      'UNKNOWN_ASSET',
      'MESSAGE_TOO_LARGE',
      'MALFORMED_MESSAGE',
    ])
    c.send({ op: 'ping' })
    await c.next((m) => m.type === 'pong', 'pong')
    expect(c.closed).toBe(false)
    const unknown = await open(a, '?assets=XRP')
    await unknown.next((m) => m.type === 'error' && m.code === 'UNKNOWN_ASSET', 'unknown asset')
  })

  it('heartbeats arrive on an idle connection', async () => {
    const c = await open(a, '?assets=BTC')
    await c.next((m) => m.type === 'heartbeat', 'heartbeat')
  })

  it('a pause signal reaches the clients as an event, and the next snapshot shows it', async () => {
    const c = await open(b, '?assets=ETH')
    await c.next((m) => m.type === 'subscribed', 'ack')
    const secret = stack.ctx.config.webhookSecret
    const post = (body: object) => {
      const raw = JSON.stringify(body)
      const ts = String(Math.floor(stack.sim.control.nowMs() / 1000))
      return a.inject({
        method: 'POST',
        url: '/webhooks/signals',
        headers: {
          'content-type': 'application/json',
          'x-signal-timestamp': ts,
          'x-signal-signature': signalSignature(secret, ts, raw),
        },
        payload: raw,
      })
    }
    expect(
      (await post({ id: 'sig-ws-1', asset: 'ETH', side: 'put', action: 'pause', reason: 'vol spike' })).statusCode,
    ).toBe(200)
    const ev = await c.next((m) => m.type === 'strategy' && m.event === 'signal', 'signal event')
    expect(ev).toMatchObject({ asset: 'ETH', sides: ['put'], action: 'pause', reason: 'vol spike' })
    const later = await open(a, '?assets=ETH')
    const snap = await later.next((m) => m.type === 'snapshot', 'snapshot')
    expect(snap.states[0].signals).toEqual({ put: 'paused', call: 'active' })
    expect(snap.states[0].seq).toBeGreaterThanOrEqual(ev.seq)
    await post({ id: 'sig-ws-2', asset: 'ETH', side: 'put', action: 'resume' })
    await c.next((m) => m.type === 'strategy' && m.event === 'signal' && m.action === 'resume', 'resume event')
  })

  it('a plain GET answers 426 and the OpenAPI document lists /ws/strategies with its message schemas', async () => {
    const r = await a.inject({ method: 'GET', url: '/ws/strategies' })
    expect(r.statusCode).toBe(426)
    const doc = (await a.inject({ method: 'GET', url: '/docs/json' })).json()
    expect(doc.paths['/ws/strategies']).toBeDefined()
    for (const k of ['StrategyEvent', 'WsStrategyState', 'WsStrategySnapshot'])
      expect(JSON.stringify(doc.components), k).toContain(k)
  })
})
