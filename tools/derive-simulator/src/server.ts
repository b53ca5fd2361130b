/**
 * The Derive simulator's server: Derive v3's JSON-RPC over HTTP (POST /v3/*) and over the
 * WebSocket /v3/ws (v3/), and the control API under /_sim/, on one engine.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Address } from 'viem'
import { WebSocketServer } from 'ws'
import { createControl, type SessionKeyGrant, type SimControl } from './control'
import { ControlError, checkBody, runControl } from './control-http'
import { type EngineConfig, SimEngine } from './engine'
import { stopL1Watchers } from './l1-deposits'
import { stopOwnedL1Payer } from './l1-withdrawals'
import { priceWalk } from './market'
import { newPrivateFeeds, pushPrivateChannels } from './v3/private-channels'
import { handleV3Http, handleV3Ws, pushV3Tickers, V3_HTTP_PREFIX, V3_WS_PATH, type V3WsConn } from './v3/server'

const MAX_BODY_BYTES = 1_000_000

export interface SimulatorOptions extends Partial<Omit<EngineConfig, 'chainId'>> {
  chainId: number
  port?: number
  host?: string
  /** `manual` (default): time moves only through the control API. `wall`: it also follows the wall clock. */
  clock?: 'manual' | 'wall'
  wallets?: { wallet: Address; owner?: Address; sessionKeys?: SessionKeyGrant[] }[]
  /**
   * With a wall clock: every `intervalMs` each index takes one step of a seeded random walk
   * (market.ts priceWalk), so prices move in the local run as they do on an exchange.
   */
  walk?: { intervalMs: number; annualVolatility: number; seed: number }
  /**
   * false: `POST /_sim/advance` is refused, saying why (the run's clients sign with the wall clock,
   * so a moved exchange clock would refuse them); default true
   */
  timeTravel?: boolean
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

  const timeTravel = opts.timeTravel !== false
  const sockets = attachSockets(engine, sync)
  const server = createServer((req, res) => {
    handleHttp(engine, control, sync, req, res, { timeTravel, pushPrivate: sockets.pushPrivate }).catch((err) =>
      send(res, 500, { error: String(err) }),
    )
  })
  sockets.attach(server)
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

/** The v3 WebSocket at /v3/ws on the HTTP server (`attach`); any other upgrade path is refused. */
function attachSockets(engine: SimEngine, sync: () => void) {
  const wss = new WebSocketServer({ noServer: true })
  const attach = (server: Server) =>
    server.on('upgrade', (req, socket, head) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname
      if (path !== V3_WS_PATH) return socket.destroy()
      wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req))
    })
  const clients = new Set<V3WsConn>()
  wss.on('connection', (ws, req: IncomingMessage) => {
    const conn: V3WsConn = {
      ws,
      wallet: null,
      signer: null,
      ip: req.socket.remoteAddress ?? '',
      channels: new Set(),
      feeds: newPrivateFeeds(),
    }
    clients.add(conn)
    ws.on('close', () => clients.delete(conn))
    ws.on('message', (raw) => {
      sync()
      handleV3Ws(engine, conn, String(raw))
        .then(() => pushPrivate())
        .catch(() => {})
    })
  })
  const pushPrivate = () => {
    for (const c of clients) pushPrivateChannels(engine, c)
  }
  return {
    pushAll: () => {
      for (const c of clients) {
        pushV3Tickers(engine, c)
        pushPrivateChannels(engine, c)
      }
    },
    pushPrivate,
    attach,
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
  o: { timeTravel: boolean; pushPrivate: () => void },
): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://x').pathname
  if (path.startsWith('/_sim/')) return handleControl(engine, control, path.slice(6), req, res, o)
  if (path.startsWith(V3_HTTP_PREFIX)) {
    const body = await readBody(req)
    sync()
    await handleV3Http(engine, req, body, res)
    return o.pushPrivate()
  }
  return send(res, 404, { error: `no route ${path}: the simulator serves ${V3_HTTP_PREFIX}* and /_sim/*` })
}

async function handleControl(
  engine: SimEngine,
  control: SimControl,
  op: string,
  req: IncomingMessage,
  res: ServerResponse,
  o: { timeTravel: boolean },
) {
  try {
    let body: unknown = {}
    if (req.method === 'POST') {
      const text = await readBody(req)
      try {
        body = text.trim() === '' ? {} : JSON.parse(text)
      } catch {
        throw new ControlError(400, 'the body is not JSON')
      }
    }
    const checked = checkBody(op, body)
    return send(res, 200, await runControl(engine, control, op, checked, o))
  } catch (err) {
    if (err instanceof ControlError)
      return send(res, err.status, { error: err.message, ...(err.field !== undefined && { field: err.field }) })
    // a failure of the operation itself (an RPC it calls, an amount it cannot take), after the body passed
    return send(res, 400, { error: err instanceof Error ? err.message : String(err) })
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
