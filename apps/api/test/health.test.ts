/**
 * GET /health: readiness over a real Postgres and Redis, a real anvil
 * (@wh/testkit), the Derive simulator, a closed port and a silent server standing in for dead
 * RPCs; liveness that touches nothing.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Config } from '@wh/config'
import { createDatabase, type Database } from '@wh/db'
import { type RunningSimulator, startDeriveSimulator } from '@wh/derive-simulator'
import { integrationContext, type RunningChain, startChain } from '@wh/testkit'
import { buildChainRegistry, type ChainName, DepositKeyring } from '@wh/wallet'
import type { FastifyInstance } from 'fastify'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PROBE_TIMEOUT_MS } from '../src/routes/health/probes'
import { buildServer } from '../src/server'

/** a loopback port nothing listens on */
async function closedPort(): Promise<number> {
  const s = createServer()
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r))
  const { port } = s.address() as AddressInfo
  await new Promise<void>((r) => s.close(() => r()))
  return port
}

/** an RPC stand-in that counts eth_blockNumber calls; `silent` accepts and never answers */
async function countingRpc(opts: { silent?: boolean } = {}) {
  let calls = 0
  const server: Server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      calls++
      if (opts.silent) return
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":1,"result":"0x2a"}')
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls: () => calls,
    close: () => {
      server.closeAllConnections()
      return new Promise<void>((r) => server.close(() => r()))
    },
  }
}

describe('GET /health', () => {
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  let chain: RunningChain
  let sim: RunningSimulator
  let keyring: DepositKeyring
  let deadUrl: string
  const open: Array<{ close(): Promise<unknown> | unknown }> = []

  beforeAll(async () => {
    ;[ctx, chain, sim] = await Promise.all([
      integrationContext(),
      startChain(),
      startDeriveSimulator({ chainId: 901, clock: 'wall' }),
    ])
    keyring = DepositKeyring.fromMnemonic(ctx.config.keys.masterMnemonic).publicOnly()
    deadUrl = `http://127.0.0.1:${await closedPort()}`
  })
  afterAll(async () => {
    for (const o of open.reverse()) await o.close()
    await Promise.all([chain?.stop(), sim?.close(), ctx?.database.close()])
  })

  async function build(
    p: { rpc?: Partial<Record<ChainName, string>>; exchangeHttpUrl?: string; redis?: Redis; database?: Database } = {},
  ): Promise<FastifyInstance> {
    const config: Config = {
      ...ctx.config,
      exchange: { ...ctx.config.exchange, httpUrl: p.exchangeHttpUrl ?? sim.v3HttpUrl },
    }
    const rpcUrls = {
      ethereum: chain.rpcUrl,
      optimism: chain.rpcUrl,
      base: chain.rpcUrl,
      arbitrum: chain.rpcUrl,
      ...p.rpc,
    }
    let redis = p.redis
    if (!redis) {
      redis = new Redis(ctx.config.cacheUrl, { maxRetriesPerRequest: 1 })
      const r = redis
      open.push({ close: () => r.disconnect() })
    }
    const app = await buildServer({
      config,
      database: p.database ?? ctx.database,
      redis,
      keyring,
      chains: buildChainRegistry({ rpcUrls }),
      logger: false,
    })
    open.push(app)
    await app.ready()
    return app
  }

  it('every dependency up (a real anvil, the Derive simulator): 200 ok', async () => {
    const app = await build()
    const res = await app.inject({ method: 'GET', url: '/health' })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({
      status: 'ok',
      checks: {
        postgres: 'up',
        redis: 'up',
        exchange: 'up',
        chains: { ethereum: 'up', optimism: 'up', base: 'up', arbitrum: 'up' },
      },
    })
  })

  it('a chain whose RPC is a closed port is down: 200 degraded, the others up', async () => {
    const app = await build({ rpc: { base: deadUrl } })
    const res = await app.inject({ method: 'GET', url: '/health' })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({
      status: 'degraded',
      checks: {
        postgres: 'up',
        redis: 'up',
        exchange: 'up',
        chains: { ethereum: 'up', optimism: 'up', base: 'down', arbitrum: 'up' },
      },
    })
    // no RPC URL (they may carry an API key) in the answer
    expect(res.body).not.toContain('127.0.0.1')
  })

  it('the exchange not answering: 200 degraded', async () => {
    const app = await build({ exchangeHttpUrl: deadUrl })
    const res = await app.inject({ method: 'GET', url: '/health' })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ status: 'degraded', checks: { exchange: 'down', postgres: 'up', redis: 'up' } })
  })

  it('chains sharing one RPC URL are probed once, and a storm of checks reuses the result', async () => {
    const rpc = await countingRpc()
    open.push(rpc)
    const app = await build({ rpc: { ethereum: rpc.url, optimism: rpc.url, base: rpc.url, arbitrum: rpc.url } })
    const answers = await Promise.all(Array.from({ length: 20 }, () => app.inject({ method: 'GET', url: '/health' })))
    expect(answers.map((a) => a.json().status)).toEqual(Array(20).fill('ok'))
    expect(rpc.calls()).toBe(1)
    await app.inject({ method: 'GET', url: '/health' })
    expect(rpc.calls()).toBe(1) // within the cache period
  })

  it('an RPC that never answers is down within the probe deadline', async () => {
    const rpc = await countingRpc({ silent: true })
    open.push(rpc)
    const app = await build({ rpc: { arbitrum: rpc.url } })
    const started = performance.now()
    const res = await app.inject({ method: 'GET', url: '/health' })
    const elapsedMs = performance.now() - started
    expect(res.statusCode).toBe(200)
    expect(res.json().checks.chains.arbitrum).toBe('down')
    expect(elapsedMs).toBeGreaterThanOrEqual(PROBE_TIMEOUT_MS - 50)
    expect(elapsedMs).toBeLessThan(PROBE_TIMEOUT_MS + 1_000)
  })

  it('Redis down: 503 down (the API cannot serve)', async () => {
    const redis = new Redis(`redis://127.0.0.1:${await closedPort()}`, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    })
    redis.on('error', () => {})
    open.push({ close: () => redis.disconnect() })
    const app = await build({ redis })
    const res = await app.inject({ method: 'GET', url: '/health' })
    expect(res.statusCode).toBe(503)
    expect(res.json()).toMatchObject({ status: 'down', checks: { postgres: 'up', redis: 'down' } })
  })

  it('Postgres down: 503 down', async () => {
    const database = createDatabase(`postgres://postgres@127.0.0.1:${await closedPort()}/postgres`, { max: 1 })
    open.push(database)
    const app = await build({ database })
    const res = await app.inject({ method: 'GET', url: '/health' })
    expect(res.statusCode).toBe(503)
    expect(res.json()).toMatchObject({ status: 'down', checks: { postgres: 'down', redis: 'up' } })
  })

  it('liveness (?probe=live, /health/live) answers 200 at once and touches nothing', async () => {
    const rpc = await countingRpc({ silent: true })
    open.push(rpc)
    const redis = new Redis(`redis://127.0.0.1:${await closedPort()}`, { lazyConnect: true, enableOfflineQueue: false })
    redis.on('error', () => {})
    open.push({ close: () => redis.disconnect() })
    const database = createDatabase(`postgres://postgres@127.0.0.1:${await closedPort()}/postgres`, { max: 1 })
    open.push(database)
    const app = await build({
      redis,
      database,
      exchangeHttpUrl: rpc.url,
      rpc: { ethereum: rpc.url, optimism: rpc.url, base: rpc.url, arbitrum: rpc.url },
    })
    for (const url of ['/health?probe=live', '/health/live']) {
      const started = performance.now()
      const res = await app.inject({ method: 'GET', url })
      expect(res.statusCode).toBe(200)
      expect(res.json()).toEqual({ status: 'ok' })
      expect(performance.now() - started).toBeLessThan(200)
    }
    expect(rpc.calls()).toBe(0)
    expect((await app.inject({ method: 'GET', url: '/health?probe=sideways' })).statusCode).toBe(400)
  })

  it('the OpenAPI document describes readiness, degraded and 503', async () => {
    const app = await build()
    const doc = app.swagger() as unknown as {
      paths: Record<string, Record<string, { description?: string; responses: object }>>
    }
    const op = doc.paths['/health']?.get
    expect(Object.keys(op?.responses ?? {})).toEqual(expect.arrayContaining(['200', '503']))
    expect(op?.description).toContain('degraded')
    expect(op?.description).toContain('still 200')
    expect(doc.paths['/health/live']?.get).toBeDefined()
  })
})
