/**
 * Market-data test stack: the Derive simulator, the price feed the worker runs (the same
 * @wh/market code, through the real Derive v3 client and the simulator's WebSocket), and API instances
 * built by buildServer over one database and one Redis, under a Redis namespace of their own.
 */
import { randomUUID } from 'node:crypto'
import { type RunningSimulator, startDeriveSimulator } from '@wh/derive-simulator'
import { DeriveClient } from '@wh/exchange'
import { type MarketNames, marketNames, type PriceFeed, type PriceFeedTuning, startPriceFeed } from '@wh/market'
import { integrationContext } from '@wh/testkit'
import { buildChainRegistry, DepositKeyring, type FeeEstimator } from '@wh/wallet'
import type { FastifyInstance } from 'fastify'
import { Redis } from 'ioredis'
import WebSocket from 'ws'
import { buildServer } from '../src/server'

export const START = Date.UTC(2026, 0, 5, 9, 0) // a Monday, after the 08:00 expiry
const silent = { info() {}, warn() {} }

/** A fixed network-fee estimator: base unreachable, every other chain 2 gwei. */
export const fixedFees: FeeEstimator = {
  feePerGasWei: async (chain) => (chain === 'base' ? undefined : 2_000_000_000n),
}

export interface MarketStack {
  sim: RunningSimulator
  ctx: Awaited<ReturnType<typeof integrationContext>>
  names: MarketNames
  redis: Redis
  /** the feed's client of the simulator (for tickers and instruments in assertions) */
  exchange: DeriveClient
  feed: PriceFeed
  apps: FastifyInstance[]
  startApp(o?: { heartbeatMs?: number; maxBufferedBytes?: number; names?: MarketNames }): Promise<FastifyInstance>
  close(): Promise<void>
}

export async function startMarketStack(tuning: Partial<PriceFeedTuning> = {}): Promise<MarketStack> {
  const sim = await startDeriveSimulator({ chainId: 901, startMs: START })
  const ctx = await integrationContext({ EXCHANGE_HTTP_URL: sim.v3HttpUrl, EXCHANGE_WS_URL: sim.v3WsUrl })
  const names = marketNames(`t-${randomUUID()}:`)
  const redis = new Redis(ctx.config.cacheUrl, { maxRetriesPerRequest: 1 })
  const clock = { now: () => new Date(sim.control.nowMs()) }
  const exchange = new DeriveClient({
    httpUrl: sim.v3HttpUrl,
    wsUrl: sim.v3WsUrl,
    wallet: ctx.config.exchange.walletAddress,
    sessionKey: ctx.config.keys.sessionPrivateKey,
    chainId: ctx.config.exchange.chainId,
    clock,
  })
  const feed = startPriceFeed({
    exchange,
    redis,
    sql: ctx.database.sql,
    log: silent,
    names,
    now: () => sim.control.nowMs(),
    tuning: {
      publishThrottleMs: 0,
      candleFlushMs: 20,
      standbyRetryMs: 50,
      leaseTtlMs: 3_000,
      probeMs: 500,
      inUseRefreshMs: 50,
      ...tuning,
    },
  })
  const keyring = DepositKeyring.fromMnemonic(ctx.config.keys.masterMnemonic).publicOnly()
  const apps: FastifyInstance[] = []
  const redises: Redis[] = [redis]
  return {
    sim,
    ctx,
    names,
    redis,
    exchange,
    feed,
    apps,
    async startApp(o = {}) {
      const appRedis = new Redis(ctx.config.cacheUrl, { maxRetriesPerRequest: 1 })
      redises.push(appRedis)
      const app = await buildServer({
        config: ctx.config,
        database: ctx.database,
        redis: appRedis,
        keyring,
        chains: buildChainRegistry(ctx.config),
        clock,
        logger: false,
        marketData: {
          names: o.names ?? names,
          fees: fixedFees,
          ...(o.heartbeatMs !== undefined && { heartbeatMs: o.heartbeatMs }),
          ...(o.maxBufferedBytes !== undefined && { maxBufferedBytes: o.maxBufferedBytes }),
        },
      })
      await app.listen({ host: '127.0.0.1', port: 0 })
      apps.push(app)
      return app
    },
    async close() {
      await feed.close()
      for (const app of apps) await app.close()
      for (const r of redises) r.disconnect()
      await ctx.database.close()
      await sim.close()
    },
  }
}

export async function waitFor<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  ms = 10_000,
  everyMs = 10,
): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const v = await probe()
    if (v !== undefined && v !== false) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, everyMs))
  }
}

// biome-ignore lint/suspicious/noExplicitAny: test messages are checked field by field
export type Msg = Record<string, any>

/** A /ws/prices client that records every message. */
export interface TestClient {
  ws: WebSocket
  messages: Msg[]
  closed: boolean
  send(m: unknown): void
  next(pred: (m: Msg) => boolean, what: string, fromIndex?: number): Promise<Msg>
  close(): void
}

export function wsUrl(app: FastifyInstance, query = ''): string {
  const addr = app.server.address()
  if (!addr || typeof addr === 'string') throw new Error('not listening')
  return `ws://127.0.0.1:${addr.port}/ws/prices${query}`
}

export async function connect(url: string): Promise<TestClient> {
  const ws = new WebSocket(url)
  const c: TestClient = {
    ws,
    messages: [],
    closed: false,
    send: (m) => ws.send(typeof m === 'string' ? m : JSON.stringify(m)),
    next: (pred, what, fromIndex = 0) => waitFor(() => c.messages.slice(fromIndex).find(pred), what),
    close: () => ws.close(),
  }
  ws.on('message', (data) => c.messages.push(JSON.parse(String(data))))
  ws.on('close', () => {
    c.closed = true
  })
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve())
    ws.once('error', reject)
  })
  return c
}
