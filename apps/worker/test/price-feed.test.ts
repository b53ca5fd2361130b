/**
 * The worker's price feed against the Derive simulator (its WebSocket ticker channels, through the
 * real DeriveClient), a real Postgres and a real Redis: one holder per deployment, throttled
 * updates with per-asset sequence numbers, the latest update cached, candles written in batches,
 * a standby taking over with the sequence continuing, and a fenced-out ex-holder.
 */
import { randomUUID } from 'node:crypto'
import { type RunningSimulator, startDeriveSimulator } from '@wh/exchange'
import {
  type MarketNames,
  marketNames,
  type PriceFeed,
  type PriceFeedTuning,
  type PriceUpdate,
  publishPriceUpdate,
  readCandles,
  tryAcquireLease,
} from '@wh/market'
import { integrationContext } from '@wh/testkit'
import { Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest'
import { buildWorkerDeps } from '../src/deps'
import { startWorkerPriceFeed } from '../src/feeds/prices'
import type { WorkerDeps } from '../src/ticks'

const silent = process.env.DEBUG_FEED
  ? { info() {}, warn: (o: object, m?: string) => console.warn(m, o) }
  : { info() {}, warn() {} }
const START = Date.UTC(2026, 0, 5, 9, 0) // a Monday after the 08:00 expiry
const MIN = 60_000
const FAST: Partial<PriceFeedTuning> = {
  leaseTtlMs: 900,
  standbyRetryMs: 50,
  publishThrottleMs: 0,
  candleFlushMs: 25,
  probeMs: 200,
}

async function waitFor<T>(probe: () => T | undefined | Promise<T | undefined>, what: string, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const v = await probe()
    if (v !== undefined && v !== false) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

/** Collects the updates published on an asset's channel. */
async function listen(url: string, names: MarketNames, asset: string) {
  const sub = new Redis(url)
  const got: PriceUpdate[] = []
  sub.on('message', (_c, m) => got.push(JSON.parse(m)))
  await sub.subscribe(names.priceChannel(asset))
  return { got, close: () => sub.disconnect() }
}

describe('price feed (worker) against the simulator', () => {
  let sim: RunningSimulator
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  let redis: Redis
  let deps: WorkerDeps
  const feeds: PriceFeed[] = []

  beforeAll(async () => {
    sim = await startDeriveSimulator({ chainId: 901, startMs: START })
    ctx = await integrationContext({ EXCHANGE_HTTP_URL: sim.httpUrl, EXCHANGE_WS_URL: sim.wsUrl })
    redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 })
    deps = buildWorkerDeps(
      ctx.config,
      { sql: ctx.database.sql, redis, log: silent },
      { clock: { now: () => new Date(sim.control.nowMs()) } },
    )
  })
  // one feed at a time on the simulator: each test's feeds end with it
  afterEach(async () => {
    await Promise.all(feeds.splice(0).map((f) => f.close()))
  })
  afterAll(async () => {
    redis?.disconnect()
    await ctx?.database.close()
    await sim?.close()
  })

  const start = (names: MarketNames, tuning: Partial<PriceFeedTuning> = FAST) => {
    const feed = startWorkerPriceFeed(deps, silent, { names, tuning })
    feeds.push(feed)
    return feed
  }

  it('one replica holds the upstream subscription; the other stands by and takes over, the sequence continuing', async () => {
    const names = marketNames(`t-${randomUUID()}:`)
    const a = start(names)
    const b = start(names)
    const holder = await waitFor(() => (a.holding ? a : b.holding ? b : undefined), 'a holder')
    const standby = holder === a ? b : a
    expect(standby.holding).toBe(false)

    const eth = await listen(inject('redisUrl'), names, 'ETH')
    sim.control.setPrice('ETH', '3100')
    const before = await waitFor(() => eth.got.find((u) => u.index === '3100'), 'ETH at 3100')

    await holder.close() // frees the lease: the standby takes it on its next retry
    await waitFor(() => standby.holding, 'the standby to take over')
    sim.control.setPrice('ETH', '3150')
    const after = await waitFor(() => eth.got.find((u) => u.index === '3150'), 'ETH at 3150')
    expect(after.seq).toBeGreaterThan(before.seq)
    const seqs = eth.got.map((u) => u.seq)
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y)) // in order, never repeated
    expect(new Set(seqs).size).toBe(seqs.length)
    eth.close()
  })

  it('publishes index, mark and the ATM options with per-asset sequence numbers, and caches the latest', async () => {
    const names = marketNames(`t-${randomUUID()}:`)
    const eth = await listen(inject('redisUrl'), names, 'ETH')
    const btc = await listen(inject('redisUrl'), names, 'BTC')
    const feed = start(names)
    await waitFor(() => feed.holding, 'holding')
    sim.control.setPrice('ETH', '3240')
    sim.control.setPrice('ETH', '3260')
    const u = await waitFor(() => eth.got.find((x) => x.index === '3260'), 'ETH 3260')
    expect(u).toMatchObject({ type: 'price', asset: 'ETH', mark: '3260' })
    const perp = u.instruments.find((i) => i.kind === 'perp')
    expect(perp?.name).toBe('ETH-PERP')
    const options = u.instruments.filter((i) => i.kind === 'option')
    // the ATM call and put of the two nearest expiries (chosen when the feed started)
    expect(options.map((o) => o.optionType).sort()).toEqual(['C', 'C', 'P', 'P'])
    for (const o of options) expect(o.expiry && Date.parse(o.expiry)).toBeGreaterThan(sim.control.nowMs())
    expect(u.atmIv).toMatch(/^0\.\d+$/)
    // consecutive numbers per asset, BTC counting on its own
    const seqs = eth.got.map((x) => x.seq)
    expect(seqs).toEqual(seqs.map((_, i) => (seqs[0] as number) + i))
    await waitFor(() => btc.got.length > 0, 'a BTC update')
    expect(btc.got[0]?.asset).toBe('BTC')
    const latest = JSON.parse((await redis.get(names.latest('ETH'))) ?? 'null') as PriceUpdate
    expect(latest.seq).toBe(eth.got.at(-1)?.seq)
    eth.close()
    btc.close()
  })

  it('folds index ticks into 1m/5m/1h/1d candles, written in batches', async () => {
    const names = marketNames(`t-${randomUUID()}:`)
    const feed = start(names)
    await waitFor(() => feed.holding, 'holding')
    const t0 = Math.ceil((sim.control.nowMs() + 1) / (60 * MIN)) * 60 * MIN // the next whole hour
    sim.control.advanceTo(t0 + 1_000)
    for (const p of ['2000', '2100', '1900', '2050']) sim.control.setPrice('BTC', p) // same minute
    sim.control.advanceTo(t0 + MIN + 1_000)
    sim.control.setPrice('BTC', '2200')
    await feed.flush()
    const rows = await waitFor(async () => {
      await feed.flush()
      const c = await readCandles(ctx.database.sql, { asset: 'BTC', interval: '1m', fromMs: t0, toMs: t0 + 2 * MIN })
      return c.length === 2 && c[1]?.closeE18 === 2200n * 10n ** 18n ? c : undefined
    }, 'two 1m candles')
    const E = 10n ** 18n
    // crossing the hour at t0 pushed the previous price (90000) first: it opens the minute
    expect(rows[0]).toMatchObject({
      openE18: 90_000n * E,
      highE18: 90_000n * E,
      lowE18: 1900n * E,
      closeE18: 2050n * E,
    })
    expect(rows[0]?.tickCount).toBeGreaterThanOrEqual(5)
    expect(rows[1]).toMatchObject({ openE18: 2200n * E, closeE18: 2200n * E, tickCount: 1 })
    const hour = await readCandles(ctx.database.sql, { asset: 'BTC', interval: '1h', fromMs: t0, toMs: t0 + 60 * MIN })
    expect(hour).toHaveLength(1)
    expect(hour[0]).toMatchObject({ openE18: 90_000n * E, lowE18: 1900n * E, closeE18: 2200n * E })
    expect(hour[0]?.tickCount).toBe((rows[0]?.tickCount ?? 0) + 1)
  })

  it('throttles: a burst publishes at most one update per window, carrying the latest state', async () => {
    const names = marketNames(`t-${randomUUID()}:`)
    const eth = await listen(inject('redisUrl'), names, 'ETH')
    const feed = start(names, { ...FAST, publishThrottleMs: 300 })
    await waitFor(() => feed.holding, 'holding')
    await waitFor(() => eth.got.length > 0, 'the first update')
    const first = eth.got.length
    for (let i = 1; i <= 30; i++) sim.control.setPrice('ETH', String(3000 + i))
    await waitFor(() => eth.got.find((u) => u.index === '3030'), 'the last price')
    // 30 ticks in one burst: the leading update may be in the burst, then one trailing update
    expect(eth.got.length - first).toBeLessThanOrEqual(2)
    eth.close()
  })

  it('an ex-holder whose lease expired cannot publish (the write is fenced by the lease token)', async () => {
    const names = marketNames(`t-${randomUUID()}:`)
    const lease = await tryAcquireLease(redis, names.feedLease, 60_000)
    expect(lease).toBeDefined()
    const body = {
      ts: new Date(START).toISOString(),
      publishedAt: new Date(START).toISOString(),
      index: '1',
      mark: '1',
      atmIv: null,
      instruments: [],
    }
    expect(await publishPriceUpdate(redis, names, lease?.token ?? '', 'ETH', body)).toBe(1)
    expect(await publishPriceUpdate(redis, names, 'not-the-holder', 'ETH', body)).toBeUndefined()
    expect(await tryAcquireLease(redis, names.feedLease, 60_000)).toBeUndefined()
    await lease?.release()
    expect(await publishPriceUpdate(redis, names, lease?.token ?? '', 'ETH', body)).toBeUndefined()
    expect(await redis.get(names.seq('ETH'))).toBe('1')
  })
})
