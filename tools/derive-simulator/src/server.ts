/**
 * The Derive simulator's server: Derive v3's JSON-RPC over HTTP (POST /v3/*) and over the
 * WebSocket /v3/ws (src/v3/sim), and the control API under /_sim/, on one engine.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type Address, getAddress, type Hex } from 'viem'
import { WebSocketServer } from 'ws'
import type { Underlying } from './assets'
import { createControl, type SimControl } from './control'
import { type EngineConfig, SimEngine } from './engine'
import { startOwnedL1Watcher, stopL1Watchers } from './l1-deposits'
import { startOwnedL1Payer, stopOwnedL1Payer, whitelistRecipient } from './l1-withdrawals'
import { priceWalk } from './market'
import { handleV3Http, handleV3Ws, pushV3Tickers, V3_HTTP_PREFIX, V3_WS_PATH, type V3WsConn } from './v3/server'

const MAX_BODY_BYTES = 1_000_000

export interface SimulatorOptions extends Partial<Omit<EngineConfig, 'chainId'>> {
  chainId: number
  port?: number
  host?: string
  /** `manual` (default): time moves only through the control API. `wall`: it also follows the wall clock. */
  clock?: 'manual' | 'wall'
  wallets?: { wallet: Address; owner?: Address; sessionKeys?: Address[] }[]
  /**
   * With a wall clock: every `intervalMs` each index takes one step of a seeded random walk
   * (market.ts priceWalk), so prices move in the local run as they do on an exchange.
   */
  walk?: { intervalMs: number; annualVolatility: number; seed: number }
}

/** How often a wall-clock simulator re-sends every subscribed ticker, moved or not. */
export const TICKER_HEARTBEAT_MS = 1_000

export interface RunningSimulator {
  /** the server's root: the control API lives under /_sim/ */
  httpUrl: string
  /** Derive v3's base URL (…/v3) and WebSocket (…/v3/ws) (docs/exchange-v3.md) */
  v3HttpUrl: string
  v3WsUrl: string
  control: SimControl
  engine: SimEngine
  close(): Promise<void>
}

/** Starts the simulator; resolves once it listens. */
export async function startDeriveSimulator(opts: SimulatorOptions): Promise<RunningSimulator> {
  const wall = opts.clock === 'wall' ? { offsetMs: 0 } : undefined
  const engine = new SimEngine({ ...opts, startMs: opts.startMs ?? Date.now() })
  const control = createControl(engine, wall)
  for (const w of opts.wallets ?? []) control.registerWallet(w)
  const sync = () => {
    if (wall) engine.advanceTo(Date.now() + wall.offsetMs)
  }

  const server = createServer((req, res) => {
    handleHttp(engine, control, sync, req, res).catch((err) => send(res, 500, { error: String(err) }))
  })
  const sockets = attachSockets(server, engine, sync)
  const pushAll = sockets.pushAll
  engine.onMarketChange(pushAll)
  // Derive's ticker channels publish every interval whether or not the market moved; a consumer
  // judges a price's freshness by the ticker's timestamp (the withdrawal bounds refuse a stale
  // one). With a wall clock the simulator does the same, once a second; a manual clock only moves
  // through the control API, which pushes on every change.
  const heartbeat = wall
    ? setInterval(() => {
        sync()
        pushAll()
      }, TICKER_HEARTBEAT_MS)
    : undefined
  heartbeat?.unref()
  const step = wall && opts.walk ? priceWalk(opts.walk.seed, opts.walk.annualVolatility) : undefined
  const walker =
    step && opts.walk
      ? setInterval(
          (intervalMs: number) => {
            sync()
            for (const [u, price] of engine.market.index) engine.setIndex(u, step(price, intervalMs))
          },
          opts.walk.intervalMs,
          opts.walk.intervalMs,
        )
      : undefined
  walker?.unref()

  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const host = opts.host ?? '127.0.0.1'
  return {
    httpUrl: `http://${host}:${port}`,
    v3HttpUrl: `http://${host}:${port}/v3`,
    v3WsUrl: `ws://${host}:${port}${V3_WS_PATH}`,
    control,
    engine,
    close: async () => {
      clearInterval(heartbeat)
      clearInterval(walker)
      await stopL1Watchers(engine)
      await stopOwnedL1Payer(engine)
      await sockets.close()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

/** The v3 WebSocket at /v3/ws on the HTTP server; any other upgrade path is refused. */
function attachSockets(server: Server, engine: SimEngine, sync: () => void) {
  const wss = new WebSocketServer({ noServer: true })
  server.on('upgrade', (req, socket, head) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname
    if (path !== V3_WS_PATH) return socket.destroy()
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req))
  })
  const clients = new Set<V3WsConn>()
  wss.on('connection', (ws) => {
    const conn: V3WsConn = { ws, wallet: null, channels: new Set() }
    clients.add(conn)
    ws.on('close', () => clients.delete(conn))
    ws.on('message', (raw) => {
      sync()
      handleV3Ws(engine, conn, String(raw)).catch(() => {})
    })
  })
  return {
    pushAll: () => {
      for (const c of clients) pushV3Tickers(engine, c)
    },
    close: async () => {
      for (const c of clients) c.ws.terminate()
      await new Promise<void>((resolve) => wss.close(() => resolve()))
    },
  }
}

async function handleHttp(
  engine: SimEngine,
  control: SimControl,
  sync: () => void,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://x').pathname
  if (path.startsWith('/_sim/')) return handleControl(engine, control, path.slice(6), req, res)
  if (path.startsWith(V3_HTTP_PREFIX)) {
    const body = await readBody(req)
    sync()
    return handleV3Http(engine, req, body, res)
  }
  return send(res, 404, { error: `no route ${path}: the simulator serves ${V3_HTTP_PREFIX}* and /_sim/*` })
}

async function handleControl(
  engine: SimEngine,
  control: SimControl,
  op: string,
  req: IncomingMessage,
  res: ServerResponse,
) {
  try {
    const body = req.method === 'POST' ? JSON.parse((await readBody(req)) || '{}') : {}
    switch (op) {
      case 'state':
        return send(res, 200, {
          now: engine.now(),
          prices: Object.fromEntries([...engine.market.index].map(([k, v]) => [k, v.toString()])),
        })
      case 'advance':
        return send(res, 200, {
          now: body.to !== undefined ? control.advanceTo(Number(body.to)) : control.advance(Number(body.ms ?? 0)),
        })
      case 'set_price':
        control.setPrice(body.currency as Underlying, String(body.price))
        return send(res, 200, { ok: true })
      case 'register_wallet':
        control.registerWallet({ wallet: body.wallet, owner: body.owner, sessionKeys: body.session_keys ?? [] })
        return send(res, 200, { ok: true })
      case 'wallet_balance':
        // the local stand-in for reading the exchange wallet on the exchange's own chain
        return send(res, 200, { amount: control.walletBalance(body.wallet, String(body.asset_name)) })
      case 'fund_wallet':
        control.fundWallet(body.wallet, String(body.asset_name), String(body.amount))
        return send(res, 200, { ok: true })
      case 'set_balance':
        control.setBalance(Number(body.subaccount_id), String(body.asset_name), String(body.amount))
        return send(res, 200, { ok: true })
      case 'watch_l1': {
        // the local run's v3 money in: credit what an OnchainActionManager on the L1 queues (l1-deposits.ts)
        const w = startOwnedL1Watcher(engine, {
          rpcUrl: String(body.rpc_url),
          manager: getAddress(String(body.manager)),
          confirmations: Number(body.confirmations ?? 0),
          pollMs: Number(body.poll_ms ?? 1_000),
          ...(body.from_block !== undefined && { fromBlock: BigInt(body.from_block) }),
        })
        return send(res, 200, { applied: await w.poll() })
      }
      case 'pay_l1': {
        // the local run's v3 money out: pay withdrawals through a WithdrawalOutbox on the L1 (l1-withdrawals.ts)
        const payer = await startOwnedL1Payer(engine, {
          rpcUrl: String(body.rpc_url),
          outbox: getAddress(String(body.outbox)),
          operatorKey: String(body.operator_key) as Hex,
          confirmations: Number(body.confirmations ?? 0),
          pollMs: Number(body.poll_ms ?? 1_000),
          ...(body.fee_usd !== undefined && { feeUsd: String(body.fee_usd) }),
        })
        return send(res, 200, { pending: payer.pending() })
      }
      case 'whitelist_recipient':
        // an owner's private/update_whitelisted_recipients, without the signed action
        whitelistRecipient(engine, getAddress(String(body.owner)), getAddress(String(body.recipient)))
        return send(res, 200, { ok: true })
      case 'subaccounts':
        // an owner's subaccounts and which is its fallback (what the local run reads its funding subaccount from)
        return send(res, 200, control.subaccountsOf(getAddress(String(body.owner))))
      case 'fail_next':
        control.failNext({ method: body.method, code: body.code, httpStatus: body.http_status, count: body.count })
        return send(res, 200, { ok: true })
      default:
        return send(res, 404, { error: `unknown control ${op}` })
    }
  } catch (err) {
    return send(res, 400, { error: String(err) })
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify(body))
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => {
      size += c.length
      if (size > MAX_BODY_BYTES) {
        reject(new Error('body too large'))
        req.destroy()
      } else chunks.push(c)
    })
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    req.on('error', reject)
  })
}
