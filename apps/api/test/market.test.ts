/**
 * GET /assets, /:asset/chart and /:asset/fees against data the price feed wrote from the Derive
 * simulator's ticker channels (real Postgres, real Redis): prices move with control.setPrice, time
 * with control.advanceTo; every figure on the routes comes from stored candles and the cached
 * latest update, never from a call to the exchange.
 */
import { fromE18, toE18 } from '@wh/exchange'
import { marketNames } from '@wh/market'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { inlineRefs } from './contract'
import { type MarketStack, START, startMarketStack, waitFor } from './market-support'

const MIN = 60_000
const iso = (ms: number) => new Date(ms).toISOString()

describe('market data routes', () => {
  let stack: MarketStack
  let app: FastifyInstance
  const get = (url: string) => app.inject({ method: 'GET', url })
  const latestIndex = async (asset: string) => {
    const raw = await stack.redis.get(stack.names.latest(asset))
    return raw ? (JSON.parse(raw).index as string) : undefined
  }
  /** sets a price and waits until the feed published it and wrote its candles */
  const setPrice = async (asset: 'ETH' | 'BTC', price: string) => {
    stack.sim.control.setPrice(asset, price)
    await waitFor(async () => (await latestIndex(asset)) === price, `${asset} at ${price}`)
    await stack.feed.flush()
  }

  beforeAll(async () => {
    stack = await startMarketStack()
    app = await stack.startApp()
    await waitFor(async () => stack.feed.holding && (await latestIndex('ETH')) === '3000', 'the feed')
  })
  afterAll(async () => {
    await stack?.close()
  })

  it('GET /assets lists ETH, BTC and USDC with deposit routes from the chain registry and the live index', async () => {
    await setPrice('ETH', '3005.5')
    const res = await get('/assets')
    expect(res.statusCode).toBe(200)
    const { assets } = res.json()
    expect(assets.map((a: { symbol: string }) => a.symbol)).toEqual(['ETH', 'BTC', 'USDC'])
    const [eth, btc, usdc] = assets
    expect(eth).toMatchObject({
      name: 'Ether',
      kind: 'underlying',
      exchangeCurrency: 'ETH',
      availability: 'active',
      indexPrice: '3005.5',
      priceAt: iso(START),
      change24hPct: null, // the feed is not 24 h old
    })
    expect(eth.depositRoutes.map((r: { chain: string }) => r.chain)).toEqual([
      'ethereum',
      'optimism',
      'base',
      'arbitrum',
    ])
    expect(eth.depositRoutes[0]).toMatchObject({ token: 'ETH', contract: null, minDeposit: '0.001000000000000000' })
    expect(usdc).toMatchObject({ kind: 'cash', indexPrice: '1', depositRoutes: expect.any(Array) })
    expect(usdc.depositRoutes[0]).toMatchObject({ token: 'USDC', decimals: 6, minDeposit: '1.000000' })
    expect(btc).toMatchObject({ depositRoutes: [], indexPrice: '90000' })
  })

  it('GET /assets lists the strategies each underlying offers under TRADING_PROFILE, with their parameters', async () => {
    const { assets } = (await get('/assets')).json()
    const [eth, btc, usdc] = assets
    const profile = stack.ctx.config.tradingProfile
    expect(eth.strategies.map((s: { id: string; kind: string }) => [s.id, s.kind])).toEqual([
      ['eth-wheel', 'wheel'],
      ['eth-put', 'put'],
      ['eth-call', 'call'],
    ])
    expect(eth.strategies.map((s: { name: string }) => s.name)).toEqual([
      `ETH wheel (${profile} profile)`,
      `ETH cash-secured put (${profile} profile)`,
      `ETH covered call (${profile} profile)`,
    ])
    const [wheel, put, call] = eth.strategies
    expect(wheel.parameters).toMatchObject({ profile, sells: ['put', 'call'] })
    expect(put.parameters).toMatchObject({ sells: ['put'], callTargetDelta: null })
    expect(call.parameters).toMatchObject({ sells: ['call'], putTargetDelta: null })
    expect(put.parameters.putTargetDelta).toMatch(/^0\.\d{4}$/)
    expect(put.parameters).toEqual(
      expect.objectContaining({
        deltaTolerance: expect.any(String),
        minTenorHours: expect.any(Number),
        maxTenorDays: expect.any(Number),
        minAnnualisedYieldPct: expect.any(String),
        sizes: { min: expect.any(String), step: expect.any(String), max: expect.any(String) },
        endOfWindow: expect.stringMatching(/^(cancel|cross)$/),
      }),
    )
    // the same descriptions and parameters as GET /:asset/strategies
    const detailed = (await get('/ETH/strategies')).json().strategies
    expect(eth.strategies).toEqual(
      detailed.map((s: Record<string, unknown>) => ({
        id: s.id,
        kind: s.kind,
        name: s.name,
        description: s.description,
        parameters: s.parameters,
      })),
    )
    expect(btc.strategies.map((s: { id: string }) => s.id)).toEqual(['btc-wheel', 'btc-put', 'btc-call'])
    expect(btc.strategies[1].parameters.sizes).not.toEqual(put.parameters.sizes) // BTC's own order sizes
    expect(usdc.strategies).toEqual([]) // the cash currency: nothing is sold on it
  })

  it('GET /:asset/chart answers the candles the feed stored, per interval, with an empty overlays array', async () => {
    stack.sim.control.advanceTo(START + 5_000)
    await setPrice('ETH', '3010')
    stack.sim.control.advanceTo(START + 30_000)
    await setPrice('ETH', '3050')
    stack.sim.control.advanceTo(START + MIN + 10_000)
    await setPrice('ETH', '2990')
    const res = await get(`/eth/chart?interval=1m&from=${iso(START)}&to=${iso(START + 2 * MIN)}`)
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(body).toMatchObject({
      asset: 'ETH',
      interval: '1m',
      from: iso(START),
      to: iso(START + 2 * MIN),
      overlays: [],
    })
    expect(body.candles).toHaveLength(2)
    expect(body.candles[0]).toMatchObject({ t: iso(START), open: '3000', high: '3050', low: '3000', close: '3050' })
    expect(body.candles[1]).toMatchObject({
      t: iso(START + MIN),
      open: '2990',
      high: '2990',
      low: '2990',
      close: '2990',
      ticks: 1,
    })

    const hour = (await get(`/ETH/chart?interval=1h&from=${iso(START)}&to=${iso(START + 60 * MIN)}`)).json()
    expect(hour.candles).toEqual([
      expect.objectContaining({ t: iso(START), open: '3000', high: '3050', low: '2990', close: '2990' }),
    ])
    const day = (
      await get(`/ETH/chart?interval=1d&from=${iso(START - 9 * 60 * MIN)}&to=${iso(START + 15 * 60 * MIN)}`)
    ).json()
    expect(day.candles).toHaveLength(1)
    // a range without ticks is empty, not an error
    const empty = await get(`/BTC/chart?interval=5m&from=${iso(START - 60 * MIN)}&to=${iso(START - 30 * MIN)}`)
    expect(empty.statusCode).toBe(200)
    expect(empty.json().candles).toEqual([])
  })

  it('GET /assets reports the 24 h change against the candle a day before the latest tick', async () => {
    stack.sim.control.advanceTo(START + 24 * 60 * MIN + 2 * MIN)
    await setPrice('ETH', '3289') // 24 h earlier the 1m close was 2990: +10 %
    const eth = (await get('/assets')).json().assets[0]
    expect(eth).toMatchObject({ indexPrice: '3289', change24hPct: '10.00' })
    await setPrice('ETH', '2900')
    expect((await get('/assets')).json().assets[0].change24hPct).toBe('-3.01')
  })

  it('an unknown asset answers 404 in the error shape', async () => {
    for (const url of ['/DOGE/chart', '/doge/fees', '/USDC/chart', '/USDC/fees']) {
      const res = await get(url)
      expect(res.statusCode, url).toBe(404)
      expect(res.json()).toEqual({
        statusCode: 404,
        code: 'UNKNOWN_ASSET',
        error: 'Not Found',
        message: expect.any(String),
        details: { asset: expect.any(String) },
      })
    }
  })

  it('bad chart queries answer 400 in the error shape', async () => {
    const cases = [
      '/ETH/chart?interval=2m',
      '/ETH/chart?from=yesterday',
      `/ETH/chart?from=${iso(START + MIN)}&to=${iso(START)}`,
      `/ETH/chart?interval=1m&from=${iso(START)}&to=${iso(START + 2_000 * MIN)}`, // more than 1,000 candles
      '/ETH/chart?colour=red',
    ]
    for (const url of cases) {
      const res = await get(url)
      expect(res.statusCode, url).toBe(400)
      expect(Object.keys(res.json()).sort(), url).toEqual(['code', 'error', 'message', 'statusCode'])
    }
  })

  it('GET /:asset/fees: platform fee, the exchange schedule, network fees per chain and a worked example in bigint', async () => {
    // a day's jump retires the options followed so far: wait until the feed follows a live call again
    await waitFor(async () => {
      const raw = await stack.redis.get(stack.names.latest('ETH'))
      if (!raw) return false
      const u = JSON.parse(raw) as {
        ts: string
        instruments: { kind: string; optionType: string | null; expiry: string | null }[]
      }
      return u.instruments.some(
        (i) =>
          i.kind === 'option' && i.optionType === 'C' && i.expiry !== null && Date.parse(i.expiry) > Date.parse(u.ts),
      )
    }, 'a live ETH call in the feed')
    const res = await get('/ETH/fees')
    expect(res.statusCode).toBe(200)
    const f = res.json()
    expect(f.platform).toMatchObject({ feeRate: '0.1', appliesTo: 'premium' })
    expect(f.exchange.options).toEqual({
      makerRate: '0.0003',
      takerRate: '0.0004',
      baseFeeUsd: '0.5',
      capRateOfOptionValue: '0.125',
    })
    const ethOnEthereum = f.network.find(
      (n: { chain: string; token: string }) => n.chain === 'ethereum' && n.token === 'ETH',
    )
    expect(ethOnEthereum.withdrawal).toEqual({
      available: true,
      asset: 'ETH',
      estimate: '0.000042', // 21,000 gas × 2 gwei
      gasLimit: '21000',
      paidBy: 'platform',
    })
    const usdcOnBase = f.network.find((n: { chain: string; token: string }) => n.chain === 'base' && n.token === 'USDC')
    expect(usdcOnBase.withdrawal).toMatchObject({ available: false, gasLimit: '65000' })
    expect(usdcOnBase.deposit).toMatchObject({
      minDeposit: '1.000000',
      transferPaidBy: 'user',
      sweepGasPaidBy: 'platform',
    })

    const ex = f.example
    expect(ex.illustrative).toBe(false)
    expect(ex.indexPrice).toBe('2900')
    expect(ex.instrument).toMatch(/^ETH-\d{8}-\d+-C$/)
    const e = (s: string) => toE18(s)
    expect(fromE18(e(ex.grossPremium) - e(ex.exchangeFeeMaker) - e(ex.platformFee))).toBe(ex.netPremiumMaker)
    // maker: 0.03 % of 2900 = 0.87, unless 12.5 % of the premium is less
    const cap = (e(ex.premiumPerOption) * 125n) / 1000n
    expect(e(ex.exchangeFeeMaker)).toBe(cap < e('0.87') ? cap : e('0.87'))
    expect(fromE18(e(ex.platformFee))).toBe(fromE18(e(ex.grossPremium) / 10n))
  })

  it('the fee example is flagged illustrative while the feed has no price', async () => {
    const other = await stack.startApp({ names: marketNames('nothing-published:') })
    const ex = (await other.inject({ method: 'GET', url: '/BTC/fees' })).json().example
    expect(ex).toMatchObject({ illustrative: true, instrument: null, indexPrice: '90000', premiumPerOption: '1800' })
    const assets = (await other.inject({ method: 'GET', url: '/assets' })).json().assets
    expect(assets[0]).toMatchObject({ indexPrice: null, change24hPct: null })
  })

  it('the OpenAPI document publishes every market route and its shapes', async () => {
    const doc = (await get('/docs/json')).json()
    for (const p of ['/assets', '/{asset}/chart', '/{asset}/fees', '/ws/prices']) expect(doc.paths[p], p).toBeDefined()
    const chart = doc.paths['/{asset}/chart'].get
    // the overlays are filled by the strategies (apps/api/test/strategies.test.ts)
    expect(JSON.stringify(inlineRefs(doc, chart.responses['200']))).toContain('cumulativeRealisedReturnPct')
  })
})
