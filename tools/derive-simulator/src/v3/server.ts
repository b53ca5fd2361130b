/**
 * The v3 wire layer of the simulator: JSON-RPC over HTTP at `POST /v3/{public|private}/{method}`
 * (auth headers on private calls, wallet = the owner) and over a WebSocket at `/v3/ws`
 * (`public/login`, `subscribe` to `ticker_slim.{instrument}.{interval}`, any method). Integer
 * literals past 2^53 (v3's nanosecond nonces) are parsed exactly, as bigints. The simulator's only
 * wire: ../server.ts mounts it on the engine beside the control API; docs/exchange-v3.md.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { RPC, type RpcErrorBody } from '@wh/exchange'
import type { SimEngine } from '../engine'
import type { Handler } from '../handler'
import { SimRpcError } from '../rpc-error'
import { requireRead, type Signer } from '../session-keys'
import type { SimWallet } from '../sim-types'
import { V3_SIM_METHODS } from './methods'
import { privateChannelOwner, pushPrivateChannels } from './private-channels'
import { readAuthHeaders, verifyV3Auth } from './verify'
import { tickerSlim } from './views'
import type { V3WsConn } from './ws-conn'

export type { V3WsConn } from './ws-conn'

export const V3_HTTP_PREFIX = '/v3/'
export const V3_WS_PATH = '/v3/ws'

type Outcome = { result: unknown } | { error: RpcErrorBody }

/** JSON with bigints as exact integer literals (v3's nanosecond nonces exceed 2^53). */
export function stringifyExact(value: unknown): string {
  const raw = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON
  return JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? raw(v.toString()) : v))
}
type Reviver = (this: unknown, key: string, value: unknown, context?: { source?: string }) => unknown

/** JSON.parse keeping integers beyond 2^53 exact (Node's reviver gets each literal's source text). */
export function parseExact(text: string): unknown {
  const reviver: Reviver = (_key, value, context) =>
    typeof value === 'number' && !Number.isSafeInteger(value) && context?.source && /^-?\d+$/.test(context.source)
      ? BigInt(context.source)
      : value
  return JSON.parse(text, reviver as (key: string, value: unknown) => unknown)
}

/** Consumes one injected failure matching the method, if any (control.failNext sets them). */
export function takeFailure(engine: SimEngine, method: string) {
  const i = engine.failures.findIndex((f) => f.remaining > 0 && (f.method === undefined || f.method === method))
  if (i < 0) return undefined
  const f = engine.failures[i]!
  f.remaining--
  if (f.remaining === 0) engine.failures.splice(i, 1)
  return f
}

/** The ids of the account's subaccounts: what `public/login` answers. */
export function subaccountIdsOf(engine: SimEngine, wallet: string): number[] {
  return [...engine.subaccounts.values()].filter((s) => s.wallet === wallet).map((s) => s.id)
}

/** Applies `subscribe` or `unsubscribe` to a connection's `channels`; the answer's `result`. */
export function applySubscription(
  method: 'subscribe' | 'unsubscribe',
  params: { channels?: unknown },
  channels: Set<string>,
  served: (channel: string) => boolean,
): { status: Record<string, string>; current_subscriptions: string[] } {
  const asked = Array.isArray(params.channels) ? params.channels.map(String) : []
  const status: Record<string, string> = {}
  for (const c of asked) {
    if (method === 'unsubscribe') channels.delete(c)
    else if (served(c)) channels.add(c)
    status[c] = method === 'unsubscribe' || channels.has(c) ? 'ok' : 'invalid channel'
  }
  return { status, current_subscriptions: [...channels] }
}

const errorOf = (err: unknown): Outcome =>
  err instanceof SimRpcError
    ? { error: { code: err.code, message: err.message, data: err.data } }
    : { error: { code: RPC.INTERNAL, message: 'Internal error', data: null } }

/** Who made a call: the authenticated account and its signer, or nobody (public), and where from. */
export interface Caller {
  wallet: SimWallet | null
  signer: Signer | null
  ip: string
}

/**
 * The private methods that act (each checks its signer's scopes itself); every other private method
 * reads, which a session key may do with `account_info` or any protocol scope (session-keys.ts).
 */
const ACTING = new Set([
  'private/order',
  'private/cancel',
  'private/cancel_all',
  'private/transfer_spot',
  'private/withdraw',
  'private/set_session_key',
  'private/edit_session_key',
  'private/update_whitelisted_recipients',
])

const RATE_LIMITED: Outcome = { error: { code: RPC.RATE_LIMITED, message: 'Rate limit exceeded', data: null } }

/** One call on the v3 method table (rate limits, then the method; private ones need `caller.wallet`). */
export async function dispatchV3(engine: SimEngine, method: string, params: unknown, caller: Caller): Promise<Outcome> {
  const handler: Handler | undefined = V3_SIM_METHODS[method]
  if (!handler) return { error: { code: RPC.METHOD_NOT_FOUND, message: 'Method not found', data: method } }
  const { wallet, signer } = caller
  if (method.startsWith('private/') && (!wallet || !signer))
    return {
      error: {
        code: RPC.HEADER_WALLET_MISSING,
        message: 'The X-DeriveWallet header not provided',
        data: 'login first',
      },
    }
  if (engine.rateLimiter && !engine.rateLimiter.take(wallet ? `account:${wallet.wallet}` : `ip:${caller.ip}`, method))
    return RATE_LIMITED
  const p = (params && typeof params === 'object' ? params : {}) as Record<string, unknown>
  try {
    if (signer && method.startsWith('private/') && !ACTING.has(method)) requireRead(signer)
    return { result: await handler({ engine, wallet, signer }, p) }
  } catch (err) {
    return errorOf(err)
  }
}

/** Serves `POST /v3/<method>`; `body` is the request's text. */
export async function handleV3Http(
  engine: SimEngine,
  req: IncomingMessage,
  body: string,
  res: ServerResponse,
): Promise<void> {
  const method = new URL(req.url ?? '/', 'http://x').pathname.slice(V3_HTTP_PREFIX.length)
  const send = (o: Outcome) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(stringifyExact({ id: null, ...o }))
  }
  if (req.method !== 'POST') return send({ error: { code: RPC.INVALID_REQUEST, message: 'POST only', data: null } })
  let params: unknown
  try {
    params = body.trim() === '' ? null : parseExact(body)
  } catch {
    return send({ error: { code: RPC.PARSE_ERROR, message: 'Parse error', data: null } })
  }
  // control.failNext, by method name (`private/transfer_spot`)
  const injected = takeFailure(engine, method)
  if (injected?.httpStatus) {
    res.writeHead(injected.httpStatus, { 'content-type': 'application/json' })
    return void res.end(JSON.stringify({ message: 'injected transport failure' }))
  }
  if (injected?.code !== undefined)
    return send({ error: { code: injected.code, message: 'Injected failure', data: null } })
  const caller: Caller = { wallet: null, signer: null, ip: req.socket.remoteAddress ?? '' }
  if (method.startsWith('private/')) {
    try {
      Object.assign(caller, await verifyV3Auth(engine, readAuthHeaders(req.headers)))
    } catch (err) {
      return send(errorOf(err))
    }
  }
  send(await dispatchV3(engine, method, params, caller))
}

/** `ticker_slim.{instrument_name}.{interval_ms}` (subscriptions.asyncapi.json). */
function slimInstrument(engine: SimEngine, channel: string) {
  const m = /^ticker_slim\.(.+)\.(100|1000)$/.exec(channel)
  return m ? engine.catalog.get(m[1] ?? '') : undefined
}

/** Whether a channel is served to this connection: a slim ticker, or a private channel of its own subaccount. */
function served(engine: SimEngine, conn: V3WsConn, channel: string): boolean {
  if (slimInstrument(engine, channel)) return true
  const sub = privateChannelOwner(engine, channel)
  return sub !== undefined && conn.wallet !== null && sub.wallet === conn.wallet.wallet
}

/** Pushes every subscribed slim ticker of one connection. */
export function pushV3Tickers(engine: SimEngine, conn: V3WsConn): void {
  for (const channel of conn.channels) {
    const inst = slimInstrument(engine, channel)
    if (!inst) continue
    const data = { instrument_ticker: tickerSlim(engine, inst), timestamp: engine.now() }
    conn.ws.send(JSON.stringify({ method: 'subscription', params: { channel, data } }))
  }
}

/** One WebSocket message of a v3 connection. */
export async function handleV3Ws(engine: SimEngine, conn: V3WsConn, text: string): Promise<void> {
  let msg: { id?: unknown; method?: unknown; params?: unknown }
  try {
    msg = parseExact(text) as typeof msg
  } catch {
    conn.ws.send(JSON.stringify({ id: null, error: { code: RPC.PARSE_ERROR, message: 'Parse error', data: null } }))
    return
  }
  const out = (o: Outcome) => conn.ws.send(stringifyExact({ id: msg.id ?? null, ...o }))
  const method = String(msg.method ?? '')
  const params = (msg.params && typeof msg.params === 'object' ? msg.params : {}) as Record<string, unknown>
  try {
    if (method === 'public/login') {
      const proof = {
        wallet: String(params.wallet),
        timestamp: String(params.timestamp),
        signature: String(params.signature),
      }
      const auth = await verifyV3Auth(engine, proof)
      conn.wallet = auth.wallet
      conn.signer = auth.signer
      return out({ result: subaccountIdsOf(engine, auth.wallet.wallet) })
    }
    if (method === 'subscribe' || method === 'unsubscribe') {
      const result = applySubscription(method, params, conn.channels, (c) => served(engine, conn, c))
      // every channel of a subscribe refused: Derive's "Invalid channels"
      if (
        method === 'subscribe' &&
        Object.values(result.status).length > 0 &&
        !Object.values(result.status).includes('ok')
      )
        return out({ error: { code: RPC.INVALID_CHANNELS, message: 'Invalid channels', data: null } })
      out({ result })
      if (method === 'subscribe') {
        pushV3Tickers(engine, conn)
        pushPrivateChannels(engine, conn)
      }
      return
    }
    out(await dispatchV3(engine, method, params, conn))
  } catch (err) {
    out(errorOf(err))
  }
}
