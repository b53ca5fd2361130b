/**
 * The price feed: ONE upstream subscription to the exchange's ticker channels for the whole
 * deployment. Every worker replica runs `startPriceFeed`; the one holding the feed lease
 * (lease.ts, `{market}:feed-lease`) subscribes, the others stand by and retry. The holder:
 * - follows the perps' tickers (index and mark), the ATM call and put of the nearest expiries
 *   (instruments.ts), re-selected every `optionsRefreshMs`, and the options of live positions
 *   (in-use.ts), re-read every `inUseRefreshMs`: an instrument no longer used is unsubscribed.
 *   The client subscribes Derive v3's channel (`DeriveClient.subscribeTicker`: `ticker_slim.<name>.<ms>`)
 *   and hands over the ticker shape the feed reads;
 * - folds every index tick into candles and writes the touched candles every `candleFlushMs`
 *   in one upsert (candle-store.ts), never one write per tick;
 * - publishes at most one update per asset per `publishThrottleMs` (the latest state, so nothing
 *   is queued): one atomic, fenced step assigns the per-asset sequence number, caches the update
 *   as the asset's latest (the WebSocket snapshot) and publishes it on Redis pub/sub;
 * - probes the upstream connection every `probeMs`; a dead connection or a lost lease ends the
 *   session (pending candles are still written), and the lease is taken again by whoever is first.
 * docs/market-data.md has the why.
 */

import type { Sql } from '@wh/db'
import type { DeriveClient, DeriveWsClient, TickerUpdate } from '@wh/exchange'
import { fromE18, parseInstrumentName, toE18 } from '@wh/exchange'
import type { Redis } from 'ioredis'
import { type MarketAsset, PRICED_ASSETS } from '../assets'
import { upsertCandles } from '../candle-store'
import { CandleAggregator, MAX_PENDING_CANDLES } from '../candles'
import { MARKET_NAMES, type MarketNames, publishPriceUpdate } from '../channels'
import { readInstrumentsInUse } from '../in-use'
import { MIN_TIME_TO_EXPIRY_MS, priceInstrumentOf, selectAtmOptions } from '../instruments'
import type { PriceInstrument } from '../messages'
import { type Lease, tryAcquireLease } from './lease'

export interface PriceFeedTuning {
  /** the lease's TTL; the holder renews every third of it */
  readonly leaseTtlMs: number
  /** a standby's retry period, and the pause after a failed session */
  readonly standbyRetryMs: number
  /** at most one published update per asset per this long (0: every tick) */
  readonly publishThrottleMs: number
  readonly candleFlushMs: number
  readonly optionsRefreshMs: number
  /** how often the options of live positions are read again (one bounded query per period) */
  readonly inUseRefreshMs: number
  /** period of the upstream liveness probe (`public/get_time` on the subscription's socket) */
  readonly probeMs: number
  /** Derive's ticker channel interval */
  readonly tickerIntervalMs: 100 | 1000
  readonly followedExpiries: number
}

export const DEFAULT_PRICE_FEED_TUNING: PriceFeedTuning = Object.freeze({
  leaseTtlMs: 15_000,
  standbyRetryMs: 5_000,
  publishThrottleMs: 250,
  candleFlushMs: 1_000,
  optionsRefreshMs: 10 * 60_000,
  inUseRefreshMs: 10_000,
  probeMs: 5_000,
  tickerIntervalMs: 100,
  followedExpiries: 2,
})

export interface FeedLog {
  info(obj: object, msg?: string): void
  warn(obj: object, msg?: string): void
}

export interface PriceFeedOptions {
  readonly exchange: Pick<DeriveClient, 'connectWs' | 'getInstruments' | 'getTicker' | 'subscribeTicker'>
  readonly redis: Redis
  readonly sql: Sql
  readonly log: FeedLog
  readonly assets?: readonly MarketAsset[]
  /** Redis names (a namespace in tests) */
  readonly names?: MarketNames
  readonly tuning?: Partial<PriceFeedTuning>
  /** the time used to pick expiries (the worker's clock) */
  readonly now?: () => number
}

export interface PriceFeed {
  /** true while this process holds the upstream subscription */
  readonly holding: boolean
  /** writes the candles folded so far (tests; shutdown does it by itself) */
  flush(): Promise<void>
  /** ends the session (writing pending candles, releasing the lease) and stops standing by */
  close(): Promise<void>
}

interface AssetState {
  readonly asset: MarketAsset
  readonly perpName: string
  indexE18: bigint | undefined
  lastTickMs: number
  perp: PriceInstrument | undefined
  /** the ATM options, nearest expiry first */
  atmNames: string[]
  /** the options of live positions, by name (some may be ATM too) */
  inUseNames: string[]
  /** options whose ticker channel is subscribed: the ATM ones and those in use */
  readonly followed: Set<string>
  /** when the nearest followed ATM option comes within MIN_TIME_TO_EXPIRY_MS of expiry: re-select then */
  reselectAtMs: number
  /** the latest ticker of each followed option */
  readonly options: Map<string, PriceInstrument>
  lastPublishAt: number
  timer: NodeJS.Timeout | undefined
}

export function startPriceFeed(opts: PriceFeedOptions): PriceFeed {
  const tuning = { ...DEFAULT_PRICE_FEED_TUNING, ...opts.tuning }
  const assets = (opts.assets ?? PRICED_ASSETS).filter((a) => a.indexInstrument !== null)
  let closed = false
  let session: FeedSession | undefined
  let retryTimer: NodeJS.Timeout | undefined
  let loop: Promise<void> = Promise.resolve()

  async function attempt(): Promise<void> {
    retryTimer = undefined
    if (closed) return
    try {
      const lease = await tryAcquireLease(opts.redis, (opts.names ?? MARKET_NAMES).feedLease, tuning.leaseTtlMs)
      if (lease) {
        opts.log.info({ feed: 'prices' }, 'price feed: lease taken, subscribing upstream')
        session = new FeedSession(opts, tuning, assets, lease)
        const reason = await session.run()
        session = undefined
        opts.log.info({ feed: 'prices', reason }, 'price feed: session ended')
      }
    } catch (err) {
      session = undefined
      opts.log.warn({ feed: 'prices', err: String(err) }, 'price feed: attempt failed')
    }
    if (!closed)
      retryTimer = setTimeout(() => {
        loop = attempt()
      }, tuning.standbyRetryMs)
  }
  loop = attempt()

  return {
    get holding() {
      return session?.live === true
    },
    flush: async () => session?.flushCandles(),
    async close() {
      closed = true
      if (retryTimer) clearTimeout(retryTimer)
      session?.stop('closed')
      await loop
    },
  }
}

class FeedSession {
  live = false
  readonly #opts: PriceFeedOptions
  readonly #tuning: PriceFeedTuning
  readonly #lease: Lease
  readonly #states: AssetState[]
  readonly #candles = new CandleAggregator()
  readonly #unsubscribe = new Map<string, () => Promise<void>>()
  readonly #timers: NodeJS.Timeout[] = []
  #ws: DeriveWsClient | undefined
  #flushing: Promise<void> | undefined
  #refreshing: Promise<void> | undefined
  #readingInUse: Promise<void> | undefined
  /** follow/unfollow runs one at a time (the ATM re-selection and the in-use refresh both change it) */
  #syncing: Promise<unknown> = Promise.resolve()
  #stopped = false
  #stop!: (reason: string) => void
  readonly #stoppedP: Promise<string>

  constructor(opts: PriceFeedOptions, tuning: PriceFeedTuning, assets: readonly MarketAsset[], lease: Lease) {
    this.#opts = opts
    this.#tuning = tuning
    this.#lease = lease
    this.#states = assets.map((asset) => ({
      asset,
      perpName: asset.indexInstrument as string,
      indexE18: undefined,
      lastTickMs: 0,
      perp: undefined,
      atmNames: [],
      inUseNames: [],
      followed: new Set(),
      reselectAtMs: Number.POSITIVE_INFINITY,
      options: new Map(),
      lastPublishAt: Number.NEGATIVE_INFINITY,
      timer: undefined,
    }))
    this.#stoppedP = new Promise((resolve) => {
      this.#stop = resolve
    })
  }

  stop(reason: string): void {
    if (this.#stopped) return
    this.#stopped = true
    this.#stop(reason)
  }

  /** Runs until stopped; resolves the reason. Always cleans up: timers, socket, candles, lease. */
  async run(): Promise<string> {
    try {
      this.#ws = await this.#opts.exchange.connectWs({ login: false })
      this.#every(this.#tuning.leaseTtlMs / 3, async () => {
        if (!(await this.#lease.renew())) this.stop('lease lost')
      })
      this.#every(this.#tuning.probeMs, async () => {
        await this.#ws?.call('public/get_time', {})
      })
      this.#every(this.#tuning.candleFlushMs, () => this.flushCandles())
      this.#every(this.#tuning.optionsRefreshMs, () => this.#refreshOptions())
      this.#every(this.#tuning.inUseRefreshMs, () => this.#refreshInUse())
      await Promise.all(this.#states.map((s) => this.#follow(s, s.perpName)))
      await this.#refreshOptions()
      await this.#refreshInUse()
      this.live = !this.#stopped
    } catch (err) {
      this.stop(`upstream failed: ${String(err)}`)
    }
    const reason = await this.#stoppedP
    this.live = false
    for (const t of this.#timers) clearInterval(t)
    for (const s of this.#states) if (s.timer) clearTimeout(s.timer)
    await this.#ws?.close().catch(() => {})
    await this.flushCandles()
    if (reason !== 'lease lost') await this.#lease.release().catch(() => {})
    return reason
  }

  /** Writes the touched candles in one upsert; on failure they go back to be written next time. */
  flushCandles(): Promise<void> {
    if (this.#flushing) return this.#flushing
    const batch = this.#candles.drain()
    if (batch.length === 0) return Promise.resolve()
    this.#flushing = upsertCandles(this.#opts.sql, batch)
      .catch((err) => {
        this.#candles.restore(batch)
        this.#opts.log.warn({ feed: 'prices', err: String(err), candles: batch.length }, 'candle write failed')
      })
      .finally(() => {
        this.#flushing = undefined
      })
    return this.#flushing
  }

  #every(ms: number, fn: () => Promise<unknown>): void {
    const t = setInterval(() => {
      fn().catch((err) => this.stop(`periodic task failed: ${String(err)}`))
    }, ms)
    this.#timers.push(t)
  }

  /** Subscribes the instrument's ticker channel once (the client names it). */
  async #follow(state: AssetState, instrument: string): Promise<void> {
    if (this.#unsubscribe.has(instrument) || !this.#ws) return
    const off = await this.#opts.exchange.subscribeTicker(this.#ws, instrument, this.#tuning.tickerIntervalMs, (u) =>
      this.#onTicker(state, u),
    )
    this.#unsubscribe.set(instrument, off)
  }

  async #unfollow(instrument: string): Promise<void> {
    const off = this.#unsubscribe.get(instrument)
    this.#unsubscribe.delete(instrument)
    await off?.()
  }

  /**
   * Subscribes the options `state` wants (ATM or in use) and unsubscribes the others, one sync at a
   * time. A dropped option leaves the next update at once (a publish is scheduled).
   */
  #syncFollows(state: AssetState): Promise<void> {
    const run = this.#syncing.then(async () => {
      if (this.#stopped) return
      const wanted = new Set([...state.atmNames, ...state.inUseNames])
      const dropped = [...state.followed].filter((n) => !wanted.has(n))
      for (const n of dropped) {
        state.followed.delete(n)
        state.options.delete(n)
        await this.#unfollow(n)
      }
      const added = [...wanted].filter((n) => !state.followed.has(n))
      // followed before the subscription answers: the first ticker may arrive ahead of the answer
      for (const n of added) state.followed.add(n)
      try {
        await Promise.all(added.map((n) => this.#follow(state, n)))
      } catch (err) {
        for (const n of added) if (!this.#unsubscribe.has(n)) state.followed.delete(n)
        throw err
      }
      if (dropped.length > 0) this.#schedulePublish(state)
    })
    this.#syncing = run.catch(() => {})
    return run
  }

  /**
   * Re-reads the options of live positions (one bounded query for every asset) and follows them.
   * A failed read keeps the set as it was (the database being away must not end the upstream
   * session); a failed subscription ends it like any upstream failure.
   */
  #refreshInUse(): Promise<void> {
    this.#readingInUse ??= this.#readInUse().finally(() => {
      this.#readingInUse = undefined
    })
    return this.#readingInUse
  }

  async #readInUse(): Promise<void> {
    if (this.#stopped) return
    const atMs = Math.max((this.#opts.now ?? Date.now)(), ...this.#states.map((s) => s.lastTickMs))
    let inUse: Map<string, string[]>
    try {
      inUse = await readInstrumentsInUse(
        this.#opts.sql,
        this.#states.map((s) => s.asset),
        atMs,
      )
    } catch (err) {
      this.#opts.log.warn({ feed: 'prices', err: String(err) }, 'reading the instruments in use failed')
      return
    }
    for (const s of this.#states) {
      const next = inUse.get(s.asset.symbol) ?? []
      if (next.length === s.inUseNames.length && next.every((n, i) => n === s.inUseNames[i])) continue
      s.inUseNames = next
      await this.#syncFollows(s)
    }
  }

  /** Re-selects the ATM options per asset (one run at a time); follows the new ones, drops the old ones. */
  #refreshOptions(): Promise<void> {
    this.#refreshing ??= this.#selectOptions().finally(() => {
      this.#refreshing = undefined
    })
    return this.#refreshing
  }

  async #selectOptions(): Promise<void> {
    const now = this.#opts.now ?? Date.now
    for (const s of this.#states) {
      const instruments = await this.#opts.exchange.getInstruments({
        currency: s.asset.exchangeCurrency,
        instrument_type: 'option',
      })
      const indexE18 = s.indexE18 ?? toE18((await this.#opts.exchange.getTicker(s.perpName)).index_price)
      // exchange time when it is ahead of ours: an expiring option is then dropped, not re-picked
      const atMs = Math.max(now(), s.lastTickMs)
      const next = selectAtmOptions(instruments, indexE18, atMs, { expiries: this.#tuning.followedExpiries })
      s.atmNames = next
      const expiries = next.flatMap((n) => {
        const p = parseInstrumentName(n)
        return p?.kind === 'option' ? [p.expirySec * 1000] : []
      })
      s.reselectAtMs =
        expiries.length > 0 ? Math.min(...expiries) - MIN_TIME_TO_EXPIRY_MS : atMs + MIN_TIME_TO_EXPIRY_MS
      await this.#syncFollows(s)
    }
  }

  #onTicker(state: AssetState, u: TickerUpdate): void {
    if (this.#stopped) return
    const t = u.ticker
    if (!t || typeof t.instrument_name !== 'string') return
    try {
      const tsMs = u.timestamp
      if (t.instrument_name === state.perpName) {
        const indexE18 = toE18(t.index_price)
        if (indexE18 <= 0n) return
        state.indexE18 = indexE18
        state.lastTickMs = Math.max(state.lastTickMs, tsMs)
        state.perp = priceInstrumentOf(t)
        this.#candles.add(state.asset.symbol, tsMs, indexE18)
        if (this.#candles.pendingCount >= MAX_PENDING_CANDLES) void this.flushCandles()
        // exchange time reached the nearest followed expiry (less the margin): follow the next ones
        if (tsMs >= state.reselectAtMs && this.live)
          this.#refreshOptions().catch((err) => this.stop(`option refresh failed: ${String(err)}`))
      } else if (state.followed.has(t.instrument_name) && parseInstrumentName(t.instrument_name)) {
        state.options.set(t.instrument_name, priceInstrumentOf(t))
        state.lastTickMs = Math.max(state.lastTickMs, tsMs)
      } else return
    } catch (err) {
      this.#opts.log.warn({ feed: 'prices', instrument: t.instrument_name, err: String(err) }, 'bad ticker ignored')
      return
    }
    this.#schedulePublish(state)
  }

  /** Leading edge, then at most one per throttle window carrying the latest state. */
  #schedulePublish(state: AssetState): void {
    if (state.timer) return
    const waitMs = state.lastPublishAt + this.#tuning.publishThrottleMs - performance.now()
    if (waitMs <= 0) this.#publish(state)
    else
      state.timer = setTimeout(() => {
        state.timer = undefined
        this.#publish(state)
      }, waitMs)
  }

  #publish(state: AssetState): void {
    if (state.indexE18 === undefined || !state.perp || this.#stopped) return
    state.lastPublishAt = performance.now()
    const atm = state.atmNames.flatMap((n) => state.options.get(n) ?? [])
    const inUse = state.inUseNames.flatMap((n) => (state.atmNames.includes(n) ? [] : (state.options.get(n) ?? [])))
    const atmCall = atm.find((o) => o.optionType === 'C' && o.iv !== null)
    const body = {
      ts: new Date(state.lastTickMs).toISOString(),
      publishedAt: new Date().toISOString(),
      index: fromE18(state.indexE18),
      mark: state.perp.mark,
      atmIv: atmCall?.iv ?? null,
      // the perp, the ATM options (nearest expiry first), then the other options in use (by name)
      instruments: [state.perp, ...atm, ...inUse],
    }
    publishPriceUpdate(
      this.#opts.redis,
      this.#opts.names ?? MARKET_NAMES,
      this.#lease.token,
      state.asset.symbol,
      body,
    ).then(
      (seq) => {
        if (seq === undefined) this.stop('lease lost')
      },
      (err) => this.#opts.log.warn({ feed: 'prices', err: String(err) }, 'price publish failed'),
    )
  }
}
