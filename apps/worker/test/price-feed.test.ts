/**
 * The worker's price feed against the Derive simulator (its WebSocket ticker channels, through the
 * real DeriveClient), a real Postgres and a real Redis: one holder per deployment, throttled
 * updates with per-asset sequence numbers, the latest update cached, candles written in batches,
 * a standby taking over with the sequence continuing, a fenced-out ex-holder, and the options of
 * live positions followed while they are live. Derive v3's `ticker_slim.*` channels, through the v3 client.
 */
import { randomUUID } from 'node:crypto'
import { type RunningSimulator, startDeriveSimulator } from '@wh/derive-simulator'
import { parseInstrumentName, toE18 } from '@wh/exchange'
import {
  type MarketNames,
  marketNames,
  type PriceFeed,
  type PriceFeedTuning,
  type PriceUpdate,
  publishPriceUpdate,
  readCandles,
  readInstrumentsInUse,
  tryAcquireLease,
} from '@wh/market'
import { integrationContext } from '@wh/testkit'
import { Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest'
import { buildWorkerDeps } from '../src/deps'
import { startWorkerPriceFeed } from '../src/feeds/prices'
import type { WorkerDeps } from '../src/ticks'
import { platformFunds } from './fixtures/exchange-stack'

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
  inUseRefreshMs: 50,
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
    // `ticker_slim.{name}.{ms}` on /v3/ws
    ctx = await integrationContext(platformFunds(sim, { USDC: '1000' }).env)
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

  /** a position row as the placing step leaves it (no ledger, no subaccount: only what the feed reads) */
  const insertPosition = async (o: { asset: string; instrument: string | null; state: string }) => {
    const expirySec = o.instrument ? (parseInstrumentName(o.instrument) as { expirySec: number }).expirySec : null
    const [row] = await ctx.database.sql<{ id: string }[]>`
      insert into positions (user_id, asset, side, subaccount_id, state, collateral_currency, collateral_amount,
        instrument, expiry_sec)
      values (${randomUUID()}, ${o.asset}, 'put', ${randomUUID()}, ${o.state}, 'USDC', '1000000000',
        ${o.instrument}, ${expirySec})
      returning id`
    return row?.id as string
  }
  /**
   * ETH puts the feed does not follow for being at the money (those are of the two nearest expiries):
   * the third expiry's, nearest a 0.9 × index strike first (a live delta and IV)
   */
  const farOptions = async () => {
    const all = await deps.exchange.getInstruments({ currency: 'ETH', instrument_type: 'option' })
    const nowMs = sim.control.nowMs()
    const targetE18 = (toE18((await deps.exchange.getTicker('ETH-PERP')).index_price) * 9n) / 10n
    const distance = (strike: string | undefined) => {
      const d = toE18(strike ?? '0') - targetE18
      return d < 0n ? -d : d
    }
    const expiries = [...new Set(all.map((i) => i.option_details?.expiry ?? 0))]
      .filter((e) => e * 1000 - nowMs > 2 * 60 * MIN)
      .sort((a, b) => a - b)
    return all
      .filter((i) => i.option_details?.expiry === expiries[2] && i.option_details?.option_type === 'P')
      .sort((a, b) => {
        const d = distance(a.option_details?.strike) - distance(b.option_details?.strike)
        return d < 0n ? -1 : d > 0n ? 1 : 0
      })
      .map((i) => i.instrument_name)
  }

  it('reads the options of live positions only (requested … closing), unexpired, per asset, bounded', async () => {
    const [a, b, c] = await farOptions()
    const nowMs = sim.control.nowMs()
    const ids = [
      ...(await Promise.all(
        ['requested', 'funding', 'placing', 'open', 'closing'].map((state) =>
          insertPosition({ asset: 'ETH', instrument: a as string, state }),
        ),
      )),
      await insertPosition({ asset: 'ETH', instrument: b as string, state: 'open' }),
      // ended, or not chosen yet: not in use
      ...(await Promise.all(
        ['settled', 'closed', 'cancelled', 'failed'].map((state) =>
          insertPosition({ asset: 'ETH', instrument: c as string, state }),
        ),
      )),
      await insertPosition({ asset: 'ETH', instrument: null, state: 'requested' }),
      // a name of another underlying filed under ETH, and an expired option: never subscribed
      await insertPosition({ asset: 'ETH', instrument: 'BTC-20260130-90000-P', state: 'open' }),
      await insertPosition({ asset: 'ETH', instrument: 'ETH-20260102-3000-P', state: 'open' }),
    ]
    const assets = [
      { symbol: 'ETH' as const, exchangeCurrency: 'ETH' },
      { symbol: 'BTC' as const, exchangeCurrency: 'BTC' },
    ]
    const inUse = await readInstrumentsInUse(ctx.database.sql, assets, nowMs)
    expect(inUse.get('ETH')).toEqual([a, b].sort())
    expect(inUse.get('BTC')).toEqual([])
    // the bound keeps the most used: `a` has five live positions, `b` one
    expect((await readInstrumentsInUse(ctx.database.sql, assets, nowMs, 1)).get('ETH')).toEqual([a])
    await ctx.database.sql`delete from positions where id = any(${ids}::uuid[])`
  })

  it("follows a live position's option: its bid, ask, mark, IV and delta in the updates, gone once the position ends", async () => {
    const names = marketNames(`t-${randomUUID()}:`)
    const eth = await listen(inject('redisUrl'), names, 'ETH')
    const feed = start(names)
    await waitFor(() => feed.holding, 'holding')
    const [instrument] = await farOptions()
    const has = (u: PriceUpdate) => u.instruments.some((i) => i.name === instrument)
    sim.control.setPrice('ETH', '3301')
    await waitFor(() => eth.got.find((u) => u.index === '3301'), 'ETH at 3301')
    expect(eth.got.some(has)).toBe(false) // not ATM, not in use: not followed

    const id = await insertPosition({ asset: 'ETH', instrument: instrument as string, state: 'open' })
    const withIt = await waitFor(() => eth.got.find(has), `${instrument} in an update`)
    const published = withIt.instruments.find((i) => i.name === instrument)
    const ticker = await deps.exchange.getTicker(instrument as string)
    expect(published).toEqual({
      name: instrument,
      kind: 'option',
      strike: ticker.option_details?.strike,
      expiry: new Date((ticker.option_details?.expiry ?? 0) * 1000).toISOString(),
      optionType: 'P',
      bid: ticker.best_bid_price,
      ask: ticker.best_ask_price,
      mark: ticker.mark_price,
      iv: ticker.option_pricing?.iv,
      delta: ticker.option_pricing?.delta,
    })
    expect(published?.iv).toMatch(/^0\.\d+$/)
    expect(published?.delta).toMatch(/^-0\.\d+$/)
    // listed after the perp and the four ATM options
    expect(withIt.instruments.map((i) => i.kind)).toEqual(['perp', 'option', 'option', 'option', 'option', 'option'])
    // it follows the market like the others (its own ticker, which may come a tick after the perp's)
    sim.control.setPrice('ETH', '3250')
    const markAfter = (await deps.exchange.getTicker(instrument as string)).mark_price
    expect(markAfter).not.toBe(ticker.mark_price)
    await waitFor(
      () =>
        eth.got.find(
          (u) => u.index === '3250' && u.instruments.some((i) => i.name === instrument && i.mark === markAfter),
        ),
      'its new mark',
    )

    await ctx.database.sql`update positions set state = 'settled' where id = ${id}`
    const mark = eth.got.length
    // dropped at the next refresh, and an update without it goes out at once
    const without = await waitFor(() => eth.got.slice(mark).find((u) => !has(u)), `an update without ${instrument}`)
    expect(without.instruments.filter((i) => i.kind === 'option')).toHaveLength(4)
    sim.control.setPrice('ETH', '3260')
    await waitFor(() => eth.got.find((u) => u.index === '3260'), 'ETH at 3260')
    expect(eth.got.slice(eth.got.indexOf(without)).some(has)).toBe(false)
    eth.close()
  })
})
