/**
 * The AsyncAPI document (GET /docs/asyncapi.json; docs/market-data.md "The AsyncAPI document"):
 * valid under the official AsyncAPI 3.0.0 JSON Schema (@asyncapi/specs, draft-07), linked from the
 * OpenAPI document, internally consistent (every reference resolves, operations use their channel's
 * messages, examples match their payloads); real frames on real sockets, sent and received, each
 * match exactly one message of their channel and every message the document declares is seen; the
 * close codes seen are documented; and its payloads are the schemas the code uses (drift).
 */
import { createRequire } from 'node:module'
import {
  AccountAuthenticatedMessage,
  AccountAuthMessage,
  AccountErrorMessage,
  AccountEventMessage,
  AccountPingMessage,
  AccountReplayedMessage,
  AccountResnapshotMessage,
  AccountSnapshotMessage,
  AccountSubscribeMessage,
} from '@wh/api-schemas/account-ws'
import { StrategySnapshotMessage, StrategyStateMessage } from '@wh/api-schemas/strategies'
import {
  ClientMessage,
  ErrorMessage,
  HeartbeatMessage,
  PongMessage,
  PriceUpdate,
  publishPriceUpdate,
  publishStrategyEvent,
  SnapshotMessage,
  StrategyEvent,
  type StrategyEventBody,
  SubscribedMessage,
  strategyNames,
  tryAcquireLease,
} from '@wh/market'
import { Ajv, type ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { enumsAsEnums } from '../src/plugins/openapi'
import { connect, type Msg, type TestClient, waitFor } from './market-support'
import { type Api, newAccount, signIn, startApi } from './support'

// biome-ignore lint/suspicious/noExplicitAny: the documents are walked as plain JSON
type Doc = Record<string, any>
const specs = createRequire(import.meta.url)('@asyncapi/specs') as { schemas: Record<string, object> }

const withFormats = (ajv: Ajv) => (addFormats as unknown as (a: Ajv) => Ajv)(ajv)
/** The official schema bundles its own copy of the draft-07 meta-schema: Ajv's is left out. */
const specAjv = () => withFormats(new Ajv({ strict: false, allErrors: true, meta: false, validateSchema: false }))

/** Every `$ref` string in `node`, with where it is. */
function refsOf(node: unknown, at = '#'): Array<[string, string]> {
  if (Array.isArray(node)) return node.flatMap((n, i) => refsOf(n, `${at}/${i}`))
  if (typeof node !== 'object' || node === null) return []
  return Object.entries(node).flatMap(([k, v]) =>
    k === '$ref' && typeof v === 'string' ? [[at, v] as [string, string]] : refsOf(v, `${at}/${k}`),
  )
}
const resolve = (doc: Doc, ref: string): unknown =>
  ref
    .replace(/^#\//, '')
    .split('/')
    .reduce<unknown>((n, p) => (n as Doc | undefined)?.[p.replaceAll('~1', '/').replaceAll('~0', '~')], doc)

/** A payload with its component references inlined (the narrowing `allOf` kept as is). */
function deref(doc: Doc, node: unknown): unknown {
  if (Array.isArray(node)) return node.map((n) => deref(doc, n))
  if (typeof node !== 'object' || node === null) return node
  const ref = (node as Doc).$ref
  if (typeof ref === 'string') return deref(doc, resolve(doc, ref))
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, deref(doc, v)]))
}
/** A TypeBox schema as JSON, `$id`s dropped and TypeBox's `Name#` references inlined. */
const BY_ID: Record<string, unknown> = { WsStrategyState: StrategyStateMessage }
function plain(node: unknown): unknown {
  const json = JSON.parse(JSON.stringify(node))
  const walk = (n: unknown): unknown => {
    if (Array.isArray(n)) return n.map(walk)
    if (typeof n !== 'object' || n === null) return n
    const ref = (n as Doc).$ref
    if (typeof ref === 'string' && ref.endsWith('#')) return plain(BY_ID[ref.slice(0, -1)])
    return Object.fromEntries(
      Object.entries(n)
        .filter(([k]) => k !== '$id')
        .map(([k, v]) => [k, walk(v)]),
    )
  }
  return walk(json)
}

const variants = (union: object) => (union as unknown as { anyOf: Doc[] }).anyOf

describe('the AsyncAPI document', () => {
  let api: Api
  let doc: Doc
  let port: number
  let closed = false
  const clients: TestClient[] = []
  /** per channel id: the validator of each message payload, by the channel's message name */
  const validators = new Map<string, Map<string, ValidateFunction>>()

  beforeAll(async () => {
    api = await startApi({}, { heartbeatMs: 200 })
    await api.app.listen({ host: '127.0.0.1', port: 0 })
    port = (api.app.server.address() as { port: number }).port
    const res = await api.app.inject({ method: 'GET', url: '/docs/asyncapi.json' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toMatch(/^application\/json/)
    doc = res.json()
    // the payloads are AsyncAPI schemas, a superset of draft-07: Ajv's default class
    const ajv = withFormats(new Ajv({ strict: false, allErrors: true }))
    ajv.addSchema(doc, 'asyncapi')
    for (const [id, channel] of Object.entries(doc.channels as Doc)) {
      const byName = new Map<string, ValidateFunction>()
      for (const [name, m] of Object.entries(channel.messages as Doc))
        byName.set(name, ajv.compile({ $ref: `asyncapi${(m as Doc).$ref}/payload` }))
      validators.set(id, byName)
    }
  })
  afterAll(async () => {
    for (const c of clients) c.close()
    if (!closed) await api?.close()
  })

  const open = async (path: string, query = '') => {
    const c = await connect(`ws://127.0.0.1:${port}${path}${query}`)
    clients.push(c)
    return c
  }
  /** The names of the channel's messages the server sends (`send`) or receives, from the operations. */
  const declared = (channel: string, action: 'send' | 'receive') =>
    Object.values(doc.operations as Doc)
      .filter((op) => op.action === action && op.channel.$ref === `#/channels/${channel}`)
      .flatMap((op) => (op.messages as Doc[]).map((m) => String(m.$ref).split('/').pop() as string))
      .sort()
  /** The channel's messages that `frame` matches, among those the server sends or receives. */
  const matches = (channel: string, frame: unknown, action: 'send' | 'receive') =>
    declared(channel, action).filter((n) => validators.get(channel)?.get(n)?.(frame))
  /** Each frame matches exactly one server message of the channel; resolves the names seen. */
  const kindsOf = (channel: string, frames: readonly Msg[]) =>
    frames.map((f) => {
      const m = matches(channel, f, 'send')
      expect(m, `${channel}: ${JSON.stringify(f).slice(0, 200)}`).toHaveLength(1)
      return m[0] as string
    })
  /** per channel: the client messages sent, by the name of the one message each matched */
  const sent = new Map<string, Set<string>>()
  /** Sends a client message after checking it matches exactly one message the server receives. */
  const sendValid = (c: TestClient, channel: string, m: object) => {
    const names = matches(channel, m, 'receive')
    expect(names, JSON.stringify(m)).toHaveLength(1)
    sent.set(channel, new Set([...(sent.get(channel) ?? []), ...names]))
    c.send(m)
  }

  it('is a valid AsyncAPI 3.0.0 document, under the official JSON Schema', () => {
    expect(doc.asyncapi).toBe('3.0.0')
    const validate = specAjv().compile(specs.schemas['3.0.0'] as object)
    const ok = validate(doc)
    expect(validate.errors ?? [], JSON.stringify(validate.errors?.slice(0, 3))).toEqual([])
    expect(ok).toBe(true)
    // the schema is not a rubber stamp: a channel whose address is not a string is refused
    expect(validate({ ...doc, channels: { prices: { address: 42 } } })).toBe(false)
  })

  it('names the OpenAPI document’s API and this server, and the OpenAPI document links it', async () => {
    const openapi = (await api.app.inject({ method: 'GET', url: '/docs/json' })).json()
    expect(doc.info).toMatchObject({ title: openapi.info.title, version: openapi.info.version })
    expect(openapi.externalDocs.url).toBe('/docs/asyncapi.json')
    expect(Object.keys(openapi.paths)).not.toContain('/docs/asyncapi.json')
    // the server is the listener the document came from, ws (wss over TLS: see asyncapi-document.test.ts)
    expect(doc.servers.api).toMatchObject({ host: 'localhost:80', protocol: 'ws' })
    expect(doc.info.externalDocs.url).toBe('http://localhost:80/docs/json')
    const direct = await fetch(`http://127.0.0.1:${port}/docs/asyncapi.json`)
    expect(((await direct.json()) as Doc).servers.api.host).toBe(`127.0.0.1:${port}`)
    // every WebSocket route of the OpenAPI document is a channel, and no channel is made up
    const wsPaths = Object.keys(openapi.paths).filter((p) => p.startsWith('/ws/'))
    expect(Object.values(doc.channels as Doc).map((c) => c.address)).toEqual(wsPaths)
  })

  it('holds together: references resolve, operations use their channel’s messages, examples match', () => {
    for (const [at, ref] of refsOf(doc)) expect(resolve(doc, ref), `${at} → ${ref}`).toBeDefined()
    for (const [id, op] of Object.entries(doc.operations as Doc)) {
      const channel = String(op.channel.$ref)
      for (const m of [...op.messages, ...(op.reply?.messages ?? [])])
        expect(String(m.$ref).startsWith(`${channel}/messages/`), `${id}: ${m.$ref}`).toBe(true)
    }
    let examples = 0
    for (const [id, channel] of Object.entries(doc.channels as Doc))
      for (const [name, ref] of Object.entries(channel.messages as Doc))
        for (const e of (resolve(doc, (ref as Doc).$ref) as Doc).examples ?? []) {
          examples++
          expect(validators.get(id)?.get(name)?.(e.payload), `${id}.${name} example ${e.name}`).toBe(true)
        }
    expect(examples).toBeGreaterThan(20)
  })

  it('/ws/prices: every frame sent and received is one message of the channel, and each message is seen', async () => {
    const lease = await tryAcquireLease(api.redis, api.names.feedLease, 60_000)
    if (!lease) throw new Error('lease')
    const example = (doc.components.messages.PriceUpdate.examples[0] as Doc).payload
    const { type: _t, asset: _a, seq: _s, ...body } = example
    await publishPriceUpdate(api.redis, api.names, lease.token, 'ETH', body)
    const c = await open('/ws/prices', '?assets=ETH')
    await c.next((m) => m.type === 'subscribed', 'ack')
    await publishPriceUpdate(api.redis, api.names, lease.token, 'BTC', { ...body, index: '91000.5', instruments: [] })
    // the dialect of the three sockets is `type`; `op`, the earlier spelling, is read too
    sendValid(c, 'prices', { type: 'subscribe', assets: ['btc'] })
    await c.next((m) => m.type === 'subscribed' && m.assets.length === 2, 'btc ack')
    await publishPriceUpdate(api.redis, api.names, lease.token, 'ETH', { ...body, index: '3010' })
    await c.next((m) => m.type === 'price' && m.index === '3010', 'an update')
    await lease.release()
    sendValid(c, 'prices', { op: 'ping' })
    sendValid(c, 'prices', { type: 'unsubscribe', assets: ['BTC'] })
    await c.next((m) => m.type === 'unsubscribed', 'unsubscribe ack')
    // what the server refuses as malformed, the document refuses too (DOGE is well-formed, but not priced)
    for (const bad of [{ op: 'dance' }, { op: 'ping', pad: 'x' }, { type: 'subscribe', assets: [] }, { type: 'auth' }])
      expect(matches('prices', bad, 'receive'), JSON.stringify(bad)).toEqual([])
    for (const bad of ['not json', { op: 'dance' }, { op: 'subscribe', assets: ['DOGE'] }]) c.send(bad)
    c.send(`{"op":"ping","pad":"${'x'.repeat(2_000)}"}`)
    c.ws.send(Buffer.from([1, 2, 3]), { binary: true })
    await waitFor(() => c.messages.filter((m) => m.type === 'error').length >= 5, 'five errors')
    await c.next((m) => m.type === 'heartbeat', 'a heartbeat')
    await c.next((m) => m.type === 'pong', 'pong')

    const seen = new Set(kindsOf('prices', c.messages))
    expect([...seen].sort()).toEqual(declared('prices', 'send'))
    expect([...(sent.get('prices') ?? [])].sort()).toEqual(declared('prices', 'receive'))
    const snap = c.messages.find((m) => m.type === 'snapshot')
    expect(snap?.updates[0].instruments).toHaveLength(2)
    // the error messages are the document's examples (the code and the text)
    const documented = (doc.components.messages.Error.examples as Doc[]).map((e) => JSON.stringify(e.payload))
    for (const e of c.messages.filter((m) => m.type === 'error')) expect(documented).toContain(JSON.stringify(e))
  })

  it('/ws/strategies: the snapshot, every strategy event kind, acks, pong, errors, heartbeats', async () => {
    const sn = strategyNames(api.names)
    const c = await open('/ws/strategies', '?assets=ETH')
    await c.next((m) => m.type === 'subscribed', 'ack')
    const expiry = '2026-01-09T08:00:00.000Z'
    const instrument = 'ETH-20260109-2700-P'
    const ts = new Date().toISOString()
    const bodies: StrategyEventBody[] = [
      {
        ts,
        event: 'cycle_opened',
        strategy: 'put',
        side: 'put',
        instrument,
        strike: '2700',
        expiry,
        mark: '31.2',
        index: '3000',
        iv: null,
        delta: '-0.2',
      },
      { ts, event: 'order', strategy: 'put', instrument, step: 'placed', price: '31.5' },
      { ts, event: 'fill', strategy: 'put', instrument, price: '31.5', cycleContracts: '2', cyclePremium: '63' },
      { ts, event: 'window_end', strategy: 'put', instrument, decision: 'completed', reason: 'all sold' },
      {
        ts,
        event: 'settlement',
        strategy: 'put',
        instrument,
        expiry,
        outcome: 'otm',
        cycleSettlementCost: '0',
        cycleRealisedReturnPct: '1.1',
      },
      { ts, event: 'signal', sides: ['put', 'call'], action: 'resume', reason: null },
      {
        ts,
        event: 'capacity',
        strategy: 'wheel',
        livePositions: 3,
        contractsOpen: '2',
        contractsPlacing: '0.5',
        collateral: { USDC: '5400', underlying: '1' },
        limits: { minContracts: '0.1', maxContractsPerUser: '10' },
      },
      { ts, event: 'wheel_leg', strategy: 'wheel', side: 'call' },
    ]
    for (const b of bodies) await publishStrategyEvent(api.redis, sn, 'ETH', b)
    await waitFor(() => c.messages.filter((m) => m.type === 'strategy').length === bodies.length, 'every event')
    sendValid(c, 'strategies', { type: 'subscribe', assets: ['BTC'] })
    await c.next((m) => m.type === 'subscribed' && m.assets.length === 2, 'btc ack')
    sendValid(c, 'strategies', { op: 'ping' })
    sendValid(c, 'strategies', { op: 'unsubscribe', assets: ['ETH'] })
    c.send({ op: 'unsubscribe', assets: ['XRP'] })
    await c.next((m) => m.type === 'error', 'an error')
    await c.next((m) => m.type === 'unsubscribed', 'unsubscribe ack')
    await c.next((m) => m.type === 'heartbeat', 'a heartbeat')
    await c.next((m) => m.type === 'pong', 'pong')

    const kinds = kindsOf('strategies', c.messages)
    expect([...new Set(kinds)].sort()).toEqual(declared('strategies', 'send'))
    expect([...(sent.get('strategies') ?? [])].sort()).toEqual(declared('strategies', 'receive'))
    // the eight events: each is the message of its own kind
    expect(kinds.filter((k) => k.startsWith('strategy_'))).toEqual(bodies.map((b) => `strategy_${b.event}`))
    expect(c.messages.find((m) => m.type === 'snapshot')?.states[0].strategies.length).toBeGreaterThan(0)
  })

  it('/ws/account: every frame sent and received is one message of the channel, and each message is seen', async () => {
    const token = await signIn(api.app, newAccount())
    const c = await open('/ws/account')
    sendValid(c, 'account', { type: 'auth', token })
    const { userId } = await c.next((m) => m.type === 'authenticated', 'authenticated')
    sendValid(c, 'account', { type: 'subscribe' })
    await c.next((m) => m.type === 'snapshot', 'snapshot')
    await api.ctx.database.sql`
      insert into deposits (chain, tx_hash, log_index, block_number, user_id, hd_index, address, token, amount, state)
      values ('base', ${`0x${'1f'.repeat(32)}`}, 0, 1, ${userId}, 0, '0x52908400098527886E0F7030069857D2E4169EE7',
        'USDC', '1500000000', 'detected')`
    await c.next((m) => m.type === 'event', 'an event')
    sendValid(c, 'account', { type: 'ping' })
    c.send({ type: 'subscribe' })
    await c.next((m) => m.type === 'error', 'already subscribed')
    await c.next((m) => m.type === 'heartbeat', 'a heartbeat')
    await c.next((m) => m.type === 'pong', 'pong')
    const resumed = await open('/ws/account')
    resumed.send({ type: 'auth', token })
    resumed.send({ type: 'subscribe', fromSeq: 0 })
    await resumed.next((m) => m.type === 'replayed', 'replayed')
    resumed.send({ type: 'subscribe', fromSeq: 9 })
    // already subscribed: a second subscribe is an error whatever it asks
    await resumed.next((m) => m.type === 'error', 'error')
    const ahead = await open('/ws/account')
    ahead.send({ type: 'auth', token })
    ahead.send({ type: 'subscribe', fromSeq: 9 })
    await ahead.next((m) => m.type === 'resnapshot', 'resnapshot')
    const kinds = new Set([c, resumed, ahead].flatMap((x) => kindsOf('account', x.messages)))
    expect([...kinds].sort()).toEqual(declared('account', 'send'))
    expect([...(sent.get('account') ?? [])].sort()).toEqual(declared('account', 'receive'))
  })

  it('the close codes the server uses are the documented ones', async () => {
    const documented = (doc.channels.prices['x-close-codes'] as Doc[]).map((k) => k.code)
    const codeOf = (c: TestClient) => new Promise<number>((r) => c.ws.once('close', (code: number) => r(code)))
    const big = await open('/ws/prices', '?assets=ETH')
    const bigClosed = codeOf(big)
    big.send(`{"op":"ping","pad":"${'x'.repeat(17 * 1024)}"}`)
    expect(await bigClosed).toBe(1009)
    const utf8 = await open('/ws/strategies', '?assets=ETH')
    const utf8Closed = codeOf(utf8)
    utf8.ws.send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { binary: false })
    expect(await utf8Closed).toBe(1007)
    const polite = await open('/ws/prices')
    const politeClosed = codeOf(polite)
    polite.ws.close(1000)
    expect(await politeClosed).toBe(1000)
    const staying = await open('/ws/strategies')
    await staying.next((m) => m.type === 'subscribed', 'ack')
    const shutdown = codeOf(staying)
    closed = true
    await api.close()
    const code = await shutdown
    expect([1005, 1006]).toContain(code)
    for (const k of [1009, 1007, 1000, code]) expect(documented).toContain(k)
    expect(doc.channels.strategies['x-close-codes']).toEqual(doc.channels.prices['x-close-codes'])
  })
})

describe('the AsyncAPI document and the code cannot drift', () => {
  let api: Api
  let doc: Doc
  let openapi: Doc
  beforeAll(async () => {
    api = await startApi()
    doc = (await api.app.inject({ method: 'GET', url: '/docs/asyncapi.json' })).json()
    openapi = (await api.app.inject({ method: 'GET', url: '/docs/json' })).json()
  })
  afterAll(() => api?.close())

  /** The schema each message's payload must be: what the route, the feed or the publisher uses. */
  const CODE: Record<string, Record<string, object>> = {
    account: {
      auth: AccountAuthMessage,
      subscribe: AccountSubscribeMessage,
      ping: AccountPingMessage,
      authenticated: AccountAuthenticatedMessage,
      snapshot: AccountSnapshotMessage,
      event: AccountEventMessage,
      replayed: AccountReplayedMessage,
      resnapshot: AccountResnapshotMessage,
      heartbeat: HeartbeatMessage,
      pong: PongMessage,
      error: AccountErrorMessage,
    },
    prices: { snapshot: SnapshotMessage, price: PriceUpdate },
    strategies: {
      snapshot: StrategySnapshotMessage,
      ...Object.fromEntries(variants(StrategyEvent).map((v) => [`strategy_${v.properties.event.const}`, v])),
    },
  }
  const SHARED: Record<string, object> = {
    subscribe: variants(ClientMessage)[0] as object,
    unsubscribe: variants(ClientMessage)[1] as object,
    ping: variants(ClientMessage)[2] as object,
    subscribed: SubscribedMessage,
    unsubscribed: SubscribedMessage,
    heartbeat: HeartbeatMessage,
    pong: PongMessage,
    error: ErrorMessage,
  }

  it('each message’s payload is the TypeBox schema the code sends or validates, keyword for keyword', () => {
    for (const [id, channel] of Object.entries(doc.channels as Doc)) {
      // the topic streams share their client messages and acks; the account stream has its own
      const code = id === 'account' ? (CODE[id] as Record<string, object>) : { ...SHARED, ...CODE[id] }
      const names = Object.keys(channel.messages)
      expect(names.sort(), id).toEqual(Object.keys(code).sort())
      for (const name of names) {
        const message = resolve(doc, channel.messages[name].$ref) as Doc
        const payload = message.payload.allOf ? message.payload.allOf[0] : message.payload
        expect(deref(doc, payload), `${id}.${name}`).toEqual(plain(code[name] as object))
      }
    }
    // the narrowed acks name the ack and the channel the route sends them on
    expect(doc.components.messages.PricesSubscribed.payload.allOf[1].properties).toEqual({
      type: { const: 'subscribed' },
      channel: { const: 'prices' },
    })
  })

  /** @fastify/swagger writes a `const` as a one-value `enum` (OpenAPI 3.0's way): the same schema */
  const constEnum = (n: unknown): unknown => {
    if (Array.isArray(n)) return n.map(constEnum)
    if (typeof n !== 'object' || n === null) return n
    const e = (n as Doc).enum
    const out = Object.fromEntries(Object.entries(n).map(([k, v]) => [k, constEnum(v)]))
    if (Array.isArray(e) && e.length === 1) {
      delete out.enum
      out.const = e[0]
    }
    return out
  }

  it('each schema the OpenAPI document also has is the same there', () => {
    const both = Object.keys(doc.components.schemas).filter((n) => n in openapi.components.schemas)
    expect(both).toEqual(expect.arrayContaining(['PriceUpdate', 'WsSnapshot', 'WsClientMessage', 'StrategyEvent']))
    // the OpenAPI document folds an anyOf of one-value strings into one enum (enumsAsEnums): the same values
    const folded = (n: unknown) => {
      const copy = JSON.parse(JSON.stringify(n))
      enumsAsEnums(copy)
      return constEnum(copy)
    }
    for (const name of both)
      expect(folded(deref(doc, doc.components.schemas[name])), name).toEqual(
        constEnum(plain(deref(openapi, openapi.components.schemas[name]))),
      )
  })
})
