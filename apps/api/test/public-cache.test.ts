/**
 * Public market data is kept until the feed's next event (routes/market/public-cache.ts): the same
 * answer with a strong ETag and Cache-Control, 304 for a matching If-None-Match, and a fresh
 * answer once a price is published, never a stale one after it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { waitFor } from './market-support'
import { type Api, startApi } from './support'

describe('public market data: kept until the next event, with ETags', () => {
  let api: Api
  beforeAll(async () => {
    api = await startApi()
    await api.seedPrice('ETH', '3000')
    // the cache keeps nothing until its subscription to the feed's channels is up (milliseconds)
    await waitFor(
      async () => ((await get('/assets')).headers['x-cache'] === 'hit' ? true : undefined),
      'a kept /assets',
      30_000,
    )
  })
  afterAll(() => api.close())

  const get = (url: string, headers: Record<string, string> = {}) => api.app.inject({ method: 'GET', url, headers })
  const ethOf = (body: string) =>
    (JSON.parse(body) as { assets: Array<{ symbol: string; indexPrice: string | null }> }).assets.find(
      (a) => a.symbol === 'ETH',
    )?.indexPrice

  it('answers with an ETag and Cache-Control; a matching If-None-Match gets 304 and no body', async () => {
    const first = await get('/assets')
    expect(first.statusCode).toBe(200)
    const etag = first.headers.etag as string
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/)
    expect(first.headers['cache-control']).toBe('public, max-age=5')
    const again = await get('/assets', { 'if-none-match': etag })
    expect(again.statusCode).toBe(304)
    expect(again.body).toBe('')
    expect(again.headers.etag).toBe(etag)
    const other = await get('/assets', { 'if-none-match': '"not-it"' })
    expect([other.statusCode, other.headers.etag, other.body]).toEqual([200, etag, first.body])
  })

  it('keeps the answer while nothing is published, and follows the next published price', async () => {
    const kept = await get('/assets')
    expect(ethOf(kept.body)).toBe('3000')
    // the latest price changes in Redis without an event: the kept answer stands (it was not recomputed)
    const raw = (await api.redis.get(api.names.latest('ETH'))) as string
    await api.redis.set(api.names.latest('ETH'), raw.replace('"index":"3000"', '"index":"3999"'))
    const cached = await get('/assets')
    expect([ethOf(cached.body), cached.headers.etag, cached.headers['x-cache']]).toEqual([
      '3000',
      kept.headers.etag,
      'hit',
    ])

    // the feed publishes: the next answers are recomputed (pub/sub delivery: within milliseconds)
    await api.seedPrice('ETH', '3100')
    const fresh = await waitFor(async () => {
      const r = await get('/assets')
      return ethOf(r.body) === '3000' ? undefined : r
    }, 'the published price')
    expect(ethOf(fresh.body)).toBe('3100')
    expect(fresh.headers.etag).not.toBe(kept.headers.etag)
  })

  it('keeps answers per canonical request: another spelling of the same question is a hit, not a new entry', async () => {
    const fees = await get('/ETH/fees')
    expect(fees.statusCode).toBe(200)
    for (const url of ['/ETH/fees', '/eth/fees', '/%45TH/fees', '/Eth/fees?cachebuster=1']) {
      const r = await get(url)
      expect([r.statusCode, r.headers['x-cache'], r.headers.etag], url).toEqual([200, 'hit', fees.headers.etag])
    }
    await get('/assets')
    for (const url of ['/assets?x=1', '/assets?x=2&y=3', '/assets?'])
      expect((await get(url)).headers['x-cache'], url).toBe('hit')
    // a parameter a route refuses is its 400, never an answer kept under another key
    const refused = await get('/ETH/chart?interval=1h&x=1')
    expect(refused.statusCode).toBe(400)
    expect((await get('/ETH/chart?interval=bogus')).statusCode).toBe(400)
    // unknown assets are the route's 404 before the cache: no entry, in any spelling
    for (const url of ['/DOGE/fees', '/doge/chart', '/%44OGE/strategies']) {
      const r = await get(url)
      expect([r.statusCode, r.json().code], url).toEqual([404, 'UNKNOWN_ASSET'])
      expect(r.headers['x-cache']).toBeUndefined()
    }
  })

  it('requests with free values (a chart range) keep to a partition of their own: a flood of them evicts nothing else', async () => {
    // a cache of 50 answers: 250 distinct ranges would have pushed every other answer out
    const small = await startApi({}, { publicCacheMaxEntries: 50 })
    try {
      const at = (url: string) => small.app.inject({ method: 'GET', url })
      await small.seedPrice('ETH', '3000')
      await waitFor(
        async () => ((await at('/assets')).headers['x-cache'] === 'hit' ? true : undefined),
        'a kept /assets',
        30_000,
      )
      const kept = await at('/BTC/fees')
      expect((await at('/BTC/fees')).headers['x-cache']).toBe('hit')
      const keptEth = await at('/ETH/fees')
      const hour = 3_600_000
      const start = Math.floor(Date.now() / hour - 260) * hour
      for (let i = 0; i < 250; i++) {
        const from = new Date(start + i * hour).toISOString()
        expect((await at(`/ETH/chart?interval=1h&from=${from}`)).statusCode).toBe(200)
      }
      const after = await at('/BTC/fees')
      expect([after.headers['x-cache'], after.headers.etag]).toEqual(['hit', kept.headers.etag])
      // fees are kept 15 s, longer than the flood takes on a loaded machine (/assets, 5 s, may age out meanwhile)
      const eth = await at('/ETH/fees')
      expect([eth.headers['x-cache'], eth.headers.etag]).toEqual(['hit', keptEth.headers.etag])
    } finally {
      await small.close()
    }
  })

  it('keeps answers per URL and never keeps an error', async () => {
    const a = await get('/ETH/chart?interval=1h')
    const b = await get('/ETH/chart?interval=1d')
    expect(a.headers.etag).not.toBe(b.headers.etag)
    const missing = await get('/DOGE/chart')
    expect(missing.statusCode).toBe(404)
    expect(missing.headers.etag).toBeUndefined()
    expect(missing.headers['cache-control']).toBeUndefined()
  })
})
