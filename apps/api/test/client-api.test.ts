/**
 * @wh/client against a real API (HTTP and both WebSockets) on the Derive simulator's price feed:
 * every typed call answers in the shape its schema says, errors arrive as ApiError, and the
 * stream helpers resubscribe after a dropped connection and resnapshot after a sequence gap.
 */
import {
  ApiClient,
  ApiError,
  type CreateWithdrawalBody,
  type Eip1193Provider,
  type KeyValueStorage,
  openPriceStream,
  openStrategyStream,
  type PriceUpdate,
  type SequenceGap,
  type StrategyState,
  type StreamStatus,
  signIn,
  TokenStore,
} from '@wh/client'
import type { FastifyInstance } from 'fastify'
import { hexToString } from 'viem'
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { type MarketStack, startMarketStack, waitFor } from './market-support'

class MemoryStorage implements KeyValueStorage {
  readonly map = new Map<string, string>()
  getItem = (k: string) => this.map.get(k) ?? null
  setItem = (k: string, v: string) => void this.map.set(k, v)
  removeItem = (k: string) => void this.map.delete(k)
}

function walletOf(account: PrivateKeyAccount): Eip1193Provider {
  return {
    async request({ method, params }) {
      if (method === 'eth_requestAccounts' || method === 'eth_accounts') return [account.address]
      if (method === 'eth_chainId') return '0x1'
      if (method === 'personal_sign')
        return account.signMessage({ message: hexToString((params as [`0x${string}`])[0]) })
      throw new Error(`unsupported ${method}`)
    },
  }
}

const baseOf = (app: FastifyInstance) => {
  const addr = app.server.address()
  if (!addr || typeof addr === 'string') throw new Error('not listening')
  return `http://127.0.0.1:${addr.port}`
}

describe('@wh/client against the API', () => {
  let stack: MarketStack
  let base: string
  let price = 3000
  const bumpEth = () => {
    price += 1
    stack.sim.control.setPrice('ETH', String(price))
    return String(price)
  }

  beforeAll(async () => {
    stack = await startMarketStack()
    await waitFor(async () => stack.feed.holding && (await stack.redis.get(stack.names.latest('ETH'))), 'the feed')
    base = baseOf(await stack.startApp({ heartbeatMs: 200 }))
  })
  afterAll(() => stack?.close())

  it('signs in and reads every protected and public route through typed calls', async () => {
    const account = privateKeyToAccount(generatePrivateKey())
    const store = new TokenStore(new MemoryStorage())
    await signIn({ apiBaseUrl: base, provider: walletOf(account), store, domain: 'app.example.test', uri: base })
    const api = new ApiClient({ baseUrl: base, token: () => store.read(account.address) })

    const deposit = await api.depositAddress()
    expect(deposit.address).toMatch(/^0x[0-9a-fA-F]{40}$/)
    expect(deposit.chains.length).toBeGreaterThan(0)
    const assets = await api.assets()
    expect(assets.assets.map((a) => a.symbol)).toEqual(expect.arrayContaining(['ETH', 'USDC']))
    const summary = await api.portfolioSummary()
    expect(summary.assets).toEqual([])
    expect((await api.portfolioStatement({ limit: 10 })).rows).toEqual([])
    expect((await api.portfolioStatementCsv()).csv).toMatch(/^event_id,/)
    expect((await api.positions()).positions).toEqual([])
    expect((await api.subaccounts()).items).toEqual([])
    const routes = await api.withdrawalRoutes()
    expect(routes.routes[0]).toMatchObject({ minUsd: expect.any(String), maxAmount: expect.any(String) })
    expect((await api.withdrawals()).items).toEqual([])
    expect((await api.chart('ETH', { interval: '1m' })).asset).toBe('ETH')
    expect((await api.fees('ETH')).asset).toBe('ETH')
    expect((await api.strategies('ETH', { limit: 5 })).strategies.length).toBeGreaterThan(0)
    expect((await api.signalsState()).assets.length).toBeGreaterThan(0)
    expect((await api.tradingConfig()).profile.name).toBeTruthy()
    expect(await api.healthLive()).toEqual({ status: 'ok' })

    // a business rule answers 422 in the error shape: a typed ApiError
    const r = routes.routes.find((x) => x.asset === 'USDC')!
    const err = await api
      .requestWithdrawal({
        chain: r.chain as CreateWithdrawalBody['chain'],
        asset: r.asset,
        amount: r.minAmount ?? '10',
        destination: account.address,
      })
      .catch((e) => e)
    expect(err).toBeInstanceOf(ApiError)
    expect(err.statusCode).toBe(422)
  })

  it('a protected call without a token is an ApiError UNAUTHORIZED; an unknown asset 404', async () => {
    const api = new ApiClient({ baseUrl: base })
    await expect(api.positions()).rejects.toMatchObject({ name: 'ApiError', statusCode: 401, code: 'UNAUTHORIZED' })
    await expect(api.fees('DOGE')).rejects.toMatchObject({ statusCode: 404, code: 'UNKNOWN_ASSET' })
  })

  it('the price stream delivers in order, resnapshots after a sequence gap and resubscribes after a drop', async () => {
    const sockets: WebSocket[] = []
    const snaps: PriceUpdate[] = []
    const events: PriceUpdate[] = []
    const gaps: SequenceGap[] = []
    const statuses: StreamStatus[] = []
    const stream = openPriceStream({
      baseUrl: base,
      assets: ['ETH'],
      connect: (url) => {
        const ws = new WebSocket(url)
        sockets.push(ws)
        return ws as never
      },
      onSnapshot: (s) => snaps.push(s),
      onEvent: (e) => events.push(e),
      onGap: (g) => gaps.push(g),
      onStatus: (s) => statuses.push(s),
      initialDelayMs: 50,
    })
    try {
      await waitFor(() => snaps.length === 1, 'the first snapshot')
      const v = bumpEth()
      await waitFor(() => events.find((e) => e.index === v), 'an update')
      expect(events.at(-1)!.seq).toBe(snaps[0]!.seq + events.length)

      // a message the client never got: the next one skips a number (published as the feed does)
      const last = stream.lastSeq('ETH')!
      const skipped = { ...events.at(-1)!, seq: last + 3, index: '1' }
      await stack.redis.publish(stack.names.priceChannel('ETH'), JSON.stringify(skipped))
      await waitFor(() => gaps.length === 1 && snaps.length === 2, 'the gap and the resnapshot')
      expect(gaps[0]).toEqual({ asset: 'ETH', expected: last + 1, received: last + 3 })
      const w = bumpEth()
      await waitFor(() => events.find((e) => e.index === w), 'an update after the resnapshot')

      // a dropped connection: the stream reconnects with everything it wants, BTC added meanwhile
      stream.subscribe(['BTC'])
      await waitFor(() => snaps.some((s) => s.asset === 'BTC'), 'the BTC snapshot')
      sockets[0]!.terminate()
      await waitFor(() => sockets.length === 2 && statuses.at(-1) === 'open', 'the reconnect')
      expect(sockets[1]!.url).toContain('assets=ETH%2CBTC')
      await waitFor(() => snaps.filter((s) => s.asset === 'ETH').length === 3, 'the snapshot after the reconnect')
      const x = bumpEth()
      await waitFor(() => events.find((e) => e.index === x), 'an update after the reconnect')
      expect(gaps).toHaveLength(1)
    } finally {
      stream.close()
    }
  })

  it('the strategy stream gets each asset state on connect', async () => {
    const states: StrategyState[] = []
    const stream = openStrategyStream({
      baseUrl: base,
      assets: ['ETH', 'BTC'],
      connect: (url) => new WebSocket(url) as never,
      onSnapshot: (s) => states.push(s),
    })
    try {
      await waitFor(() => states.length === 2, 'two states')
      expect(states.map((s) => s.asset).sort()).toEqual(['BTC', 'ETH'])
      expect(states[0]!.signals).toEqual({ put: 'active', call: 'active' })
    } finally {
      stream.close()
    }
  })
})
