/**
 * GET /:asset/strategies (spec 4.2, public; docs/market-data.md "Strategies"): the platform's
 * strategies on an asset under TRADING_PROFILE, the cycle each sells now (from the cached tickers in
 * Redis, never the exchange), per-cycle history and statistics with the losing cycles in every
 * figure, against holding the asset. Also the chart's overlays and the /ws/strategies snapshot.
 */

import { AssetParams } from '@wh/api-schemas/market'
import { StrategiesQuery, StrategiesResponse } from '@wh/api-schemas/strategies'
import { type Clock, systemClock } from '@wh/core'
import type { Sql } from '@wh/db'
import { fromE18, toE18 } from '@wh/exchange'
import {
  type ChosenQuote,
  type Cycle,
  cycleReturn,
  holdStats,
  type MarketNames,
  netOf,
  type PriceUpdate,
  pctString,
  premiumYield,
  RATIO_ONE,
  ratioString,
  readChosenQuotes,
  readCycles,
  readHoldCloses,
  readLatestPrices,
  readStrategySeqs,
  returnSeries,
  STATS_WINDOW_MS,
  STRATEGY_KINDS,
  type StrategyKind,
  type StrategyNames,
  strategyNames,
  windowStats,
} from '@wh/market'
import { chooseExpiry, chooseStrike, type OptionQuote, type TradingProfile } from '@wh/trading'
import type { FastifyInstance } from 'fastify'
import type { Redis } from 'ioredis'
import type Type from 'typebox'
import { UnknownAssetError } from './errors'
import { NOT_MODIFIED, withCacheHeaders } from './public-cache'

export interface StrategiesOptions {
  sql: Sql
  redis: Redis
  names: MarketNames
  profile: TradingProfile
  clock?: Clock
  /**
   * how long an asset's history, statistics and live cycles are reused while no strategy event
   * arrives (the price parts of the current cycle are read on every request)
   */
  cacheMs?: number
}

/** Default reuse of the Postgres part; a strategy event (new sequence number) ends it sooner. */
export const STRATEGIES_CACHE_MS = 2_000
const E12 = 10n ** 12n
const usdc = (v: bigint) => fromE18(v * E12)
const bpsFraction = (bps: number) => ratioString((BigInt(bps) * RATIO_ONE) / 10_000n)
const bpsPct = (bps: number) => ratioString((BigInt(bps) * RATIO_ONE) / 100n, 2)

const NAMES: Record<StrategyKind, (asset: string) => string> = {
  wheel: (a) => `${a} wheel`,
  put: (a) => `${a} cash-secured put`,
  call: (a) => `${a} covered call`,
}
const DESCRIPTIONS: Record<StrategyKind, string> = {
  wheel:
    'Sells a put while the wheel holds cash and a call (never below the cost basis) while it holds the asset, one leg after another.',
  put: 'Sells one cash-secured put per request; the collateral is the strike in USDC.',
  call: 'Sells one covered call per request; the collateral is the asset itself.',
}

/** The strategies the profile offers on an underlying it sizes (ETH, BTC); none on anything else. */
export function offeredStrategies(asset: string, p: TradingProfile) {
  if (!Object.hasOwn(p.sizes, asset)) return []
  return STRATEGY_KINDS.map((kind) => strategyDescriptor(kind, asset, p))
}

/** What a strategy is on an asset under the profile: id, name, description and parameters. */
export function strategyDescriptor(kind: StrategyKind, asset: string, p: TradingProfile) {
  return {
    id: `${asset.toLowerCase()}-${kind}`,
    kind,
    name: `${NAMES[kind](asset)} (${p.name} profile)`,
    description: DESCRIPTIONS[kind],
    parameters: strategyParameters(kind, asset, p),
  }
}

export function strategyParameters(kind: StrategyKind, asset: string, p: TradingProfile) {
  const sizes = p.sizes[asset as 'ETH' | 'BTC'] ?? { min: '0', step: '0', max: '0' }
  return {
    profile: p.name,
    sells: kind === 'wheel' ? (['put', 'call'] as const) : ([kind] as const),
    putTargetDelta: kind === 'call' ? null : bpsFraction(p.putTargetDeltaBps),
    callTargetDelta: kind === 'put' ? null : bpsFraction(p.callTargetDeltaBps),
    deltaTolerance: bpsFraction(p.deltaToleranceBps),
    minTenorHours: p.minTenorHours,
    maxTenorDays: p.maxTenorDays,
    minAnnualisedYieldPct: bpsPct(p.minAnnualisedYieldBps),
    sizes: { ...sizes },
    makerWindowMinutes: Math.round(p.makerWindowMs / 60_000),
    repriceEverySeconds: Math.round(p.repriceEveryMs / 1000),
    makerStartAboveMarkPct: bpsPct(p.makerStartAboveMarkBps),
    endOfWindow: p.endOfWindow,
    maxCrossBelowMarkPct: bpsPct(p.maxCrossBelowMarkBps),
  }
}

interface LiveCycleRow {
  strategy: StrategyKind
  side: 'put' | 'call'
  instrument: string
  strike_e18: string
  expiry_sec: number
  placing: boolean
  legs: number
  filled_e18: string
  premium: string
}

/** Cycles with live legs (placing or open), newest first (bounded). */
async function readLiveCycles(sql: Sql, asset: string): Promise<LiveCycleRow[]> {
  return sql<LiveCycleRow[]>`
    select case when wheel_id is not null then 'wheel' else side end as strategy, side, instrument,
      min(strike_e18)::text as strike_e18, expiry_sec::float8 as expiry_sec, bool_or(state = 'placing') as placing,
      count(*) filter (where filled_e18 > 0)::int as legs, sum(filled_e18)::text as filled_e18,
      sum(premium)::text as premium
    from positions
    where asset = ${asset} and state in ('placing', 'open', 'closing') and instrument is not null
      and strike_e18 is not null and expiry_sec is not null
    group by 1, side, instrument, expiry_sec
    order by max(created_at) desc
    limit 64`
}

type CurrentCycleValue = NonNullable<ReturnType<typeof describeCycle>>

function describeCycle(o: {
  status: 'placing' | 'open' | 'indicative'
  side: 'put' | 'call'
  instrument: string
  strikeE18: bigint
  expiryMs: number
  nowMs: number
  latest: PriceUpdate | undefined
  chosen: { mark: string; ts: string; iv: string | null; delta: string | null } | undefined
  sold: { legs: number; filledE18: bigint; premium: bigint } | undefined
}) {
  const feed = o.latest?.instruments.find((i) => i.name === o.instrument)
  const mark = feed ? feed.mark : (o.chosen?.mark ?? null)
  const indexE18 = o.latest ? toE18(o.latest.index) : null
  const soldPriceE18 =
    o.sold && o.sold.filledE18 > 0n ? (o.sold.premium * E12 * RATIO_ONE) / o.sold.filledE18 : undefined
  const premiumE18 = soldPriceE18 ?? (mark === null ? null : toE18(mark))
  const notes: string[] = []
  if (!o.latest) notes.push('no index cached yet: the price feed has not published this asset')
  if (mark === null) notes.push(`no ticker cached for ${o.instrument}`)
  else if (!feed)
    notes.push(`mark from when ${o.instrument} was chosen: the price feed caches at-the-money options only`)
  return {
    status: o.status,
    side: o.side,
    instrument: o.instrument,
    strike: fromE18(o.strikeE18),
    expiry: new Date(o.expiryMs).toISOString(),
    timeToExpirySeconds: Math.max(0, Math.floor((o.expiryMs - o.nowMs) / 1000)),
    indexPrice: o.latest?.index ?? null,
    premium: premiumE18 === null ? null : fromE18(premiumE18),
    premiumSource: soldPriceE18 !== undefined ? ('sold' as const) : mark === null ? null : ('mark' as const),
    mark,
    markSource: feed ? ('price-feed' as const) : o.chosen ? ('cycle-opened' as const) : null,
    markAt: feed ? (o.latest?.ts ?? null) : (o.chosen?.ts ?? null),
    iv: feed ? feed.iv : (o.chosen?.iv ?? null),
    delta: feed ? feed.delta : (o.chosen?.delta ?? null),
    distanceToStrikePct:
      indexE18 === null || indexE18 === 0n ? null : pctString(((o.strikeE18 - indexE18) * RATIO_ONE) / indexE18, 2),
    breakeven:
      premiumE18 === null ? null : fromE18(o.side === 'put' ? o.strikeE18 - premiumE18 : o.strikeE18 + premiumE18),
    sold: o.sold ? { legs: o.sold.legs, contracts: fromE18(o.sold.filledE18), premium: usdc(o.sold.premium) } : null,
    note: notes.length > 0 ? notes.join('; ') : null,
  }
}

/** What the strategy would sell now, from the options in the latest cached price update. */
function indicative(
  kind: StrategyKind,
  latest: PriceUpdate | undefined,
  p: TradingProfile,
  nowMs: number,
): CurrentCycleValue | string {
  if (!latest) return 'no ticker cached yet: the price feed has not published this asset'
  const side = kind === 'call' ? 'call' : 'put' // a wheel starts in cash: it sells a put first
  const quotes: OptionQuote[] = latest.instruments
    .filter((i) => i.kind === 'option' && i.expiry && i.strike && i.delta !== null && i.optionType)
    .map((i) => ({
      instrument: i.name,
      expirySec: Math.floor(Date.parse(i.expiry as string) / 1000),
      strikeE18: toE18(i.strike as string),
      type: i.optionType as 'P' | 'C',
      // a display figure turned into bps exactly as the placing step does with the exchange's delta
      deltaBps: Math.round(Number(i.delta) * 10_000),
      markE18: toE18(i.mark),
    }))
  const expiry = chooseExpiry(
    quotes.map((q) => q.expirySec),
    nowMs,
    p,
  )
  const pick =
    expiry === undefined
      ? undefined
      : chooseStrike(
          quotes.filter((q) => q.expirySec === expiry),
          side,
          p,
        )
  if (!pick)
    return (
      `no cached ${side} near the target delta in the tenor window: the price feed caches the at-the-money ` +
      'options only, the placing step reads the whole chain from the exchange when it sells'
    )
  return describeCycle({
    status: 'indicative',
    side,
    instrument: pick.instrument,
    strikeE18: pick.strikeE18,
    expiryMs: pick.expirySec * 1000,
    nowMs,
    latest,
    chosen: undefined,
    sold: undefined,
  })
}

/** What the current cycles are made of besides the price: the live cycles and the quotes they were chosen at. */
export interface LiveCycles {
  readonly live: readonly LiveCycleRow[]
  readonly chosenOf: ReadonlyMap<string, ChosenQuote | undefined>
}

/** The live cycles of an asset (Postgres) and their chosen quotes (Redis). */
export async function readLiveCycleState(
  o: { sql: Sql; redis: Redis; names: MarketNames },
  asset: string,
): Promise<LiveCycles> {
  const live = await readLiveCycles(o.sql, asset)
  const instruments = [...new Set(live.map((l) => l.instrument))]
  const chosen = await readChosenQuotes(o.redis, strategyNames(o.names), instruments)
  return { live, chosenOf: new Map(instruments.map((i, k) => [i, chosen[k]])) }
}

/** The cycle each strategy sells now (live legs first, else what it would sell), for the route and the snapshot. */
export async function currentCycles(
  o: { sql: Sql; redis: Redis; names: MarketNames; profile: TradingProfile },
  asset: string,
  nowMs: number,
  latestRaw?: string | null,
  liveState?: LiveCycles,
) {
  const [raw] = latestRaw !== undefined ? [latestRaw] : await readLatestPrices(o.redis, o.names, [asset])
  const latest = raw ? (JSON.parse(raw) as PriceUpdate) : undefined
  const { live, chosenOf } = liveState ?? (await readLiveCycleState(o, asset))
  return STRATEGY_KINDS.map((kind) => {
    const mine = live.filter((l) => l.strategy === kind)
    const l = mine[0]
    if (!l) {
      const v = indicative(kind, latest, o.profile, nowMs)
      return typeof v === 'string'
        ? { kind, liveCycles: 0, currentCycle: null, currentCycleNote: v }
        : { kind, liveCycles: 0, currentCycle: v, currentCycleNote: null }
    }
    const filledE18 = BigInt(l.filled_e18)
    return {
      kind,
      liveCycles: mine.length,
      currentCycleNote: null,
      currentCycle: describeCycle({
        status: l.placing ? 'placing' : 'open',
        side: l.side,
        instrument: l.instrument,
        strikeE18: BigInt(l.strike_e18),
        expiryMs: l.expiry_sec * 1000,
        nowMs,
        latest,
        chosen: chosenOf.get(l.instrument),
        sold: filledE18 > 0n ? { legs: l.legs, filledE18, premium: BigInt(l.premium) } : undefined,
      }),
    }
  })
}

function cycleItem(c: Cycle, cumulative: Map<number, bigint>) {
  const r = cycleReturn(c)
  const cum = c.settled ? cumulative.get(c.expiryMs) : undefined
  return {
    cycleId: `${c.strategy}:${c.instrument}`,
    strategy: c.strategy,
    side: c.side,
    instrument: c.instrument,
    strike: fromE18(c.strikeE18),
    expiry: new Date(c.expiryMs).toISOString(),
    soldAt: new Date(c.soldAtMs).toISOString(),
    status: c.settled ? ('settled' as const) : ('open' as const),
    legs: c.legs,
    contracts: fromE18(c.filledE18),
    premium: usdc(c.premium),
    fees: usdc(c.fees),
    settlementCost: usdc(c.settlementCost),
    net: usdc(netOf(c)),
    collateral: usdc(c.collateral),
    indexAtSale: c.indexAtSaleE18 === null ? null : fromE18(c.indexAtSaleE18),
    ivAtSale: c.ivAtSaleE18 === null ? null : fromE18(c.ivAtSaleE18),
    premiumYieldPct: pctString(premiumYield(c)),
    outcome: c.outcome,
    realisedReturnPct: r === null ? null : pctString(r),
    cumulativeRealisedReturnPct: cum === undefined ? null : pctString(cum),
  }
}

const cumulativeByExpiry = (cycles: readonly Cycle[]) =>
  new Map(returnSeries(cycles).map((p) => [p.atMs, p.cumulative]))

async function windowOf(sql: Sql, asset: string, cycles: readonly Cycle[], fromMs: number, toMs: number) {
  const s = windowStats(cycles, fromMs, toMs)
  const pct = (v: bigint | null) => (v === null ? null : pctString(v))
  const h = holdStats(await readHoldCloses(sql, asset, fromMs, toMs), fromMs, toMs)
  return {
    from: new Date(fromMs).toISOString(),
    to: new Date(toMs).toISOString(),
    strategy: {
      settledCycles: s.settledCycles,
      losingCycles: s.losingCycles,
      realisedReturnPct: pct(s.realisedReturn),
      annualisedReturnPct: pct(s.annualisedReturn),
      hitRatio: s.hitRatio === null ? null : ratioString(s.hitRatio),
      otmRatio: s.otmRatio === null ? null : ratioString(s.otmRatio),
      averageLossPct: pct(s.averageLoss),
      maxDrawdownPct: pct(s.maxDrawdown),
    },
    hold: h && {
      startPrice: fromE18(h.startPriceE18),
      endPrice: fromE18(h.endPriceE18),
      returnPct: pctString(h.return),
      annualisedReturnPct: pct(h.annualisedReturn),
      maxDrawdownPct: pctString(h.maxDrawdown),
    },
  }
}

/** History and statistics of one strategy (the Postgres part of the answer). */
async function strategyRecord(sql: Sql, asset: string, all: readonly Cycle[], kind: StrategyKind, nowMs: number) {
  const cycles = all.filter((c) => c.strategy === kind)
  const cumulative = cumulativeByExpiry(cycles)
  const startMs = cycles.reduce((m, c) => Math.min(m, c.soldAtMs), Number.POSITIVE_INFINITY)
  const started = Number.isFinite(startMs) && startMs <= nowMs
  return {
    history: cycles
      .slice()
      .reverse()
      .map((c) => cycleItem(c, cumulative)),
    statistics: {
      last4Weeks: started
        ? await windowOf(sql, asset, cycles, Math.max(startMs, nowMs - STATS_WINDOW_MS), nowMs)
        : null,
      sinceStart: started ? await windowOf(sql, asset, cycles, startMs, nowMs) : null,
    },
  }
}

export interface ChartOverlays {
  overlays: {
    cycleId: string
    strategy: StrategyKind
    side: 'put' | 'call'
    instrument: string
    strike: string
    soldAt: string
    expiry: string
    ivAtSale: string | null
    outcome: 'itm' | 'otm' | null
    cumulativeRealisedReturnPct: string | null
  }[]
  returns: { strategy: StrategyKind; t: string; cumulativeRealisedReturnPct: string }[]
}

/** Most overlays one chart returns (the chart itself is bounded at 1,000 candles). */
export const MAX_OVERLAYS = 1_000

/**
 * GET /:asset/chart's overlays: each cycle whose life [sale, expiry] meets [fromMs, toMs), and each
 * strategy's cumulative realised return at every expiry in the range. `ivAtSale` is the mark IV the
 * legs recorded when they chose the instrument (`positions.iv_e18`), weighted by contracts.
 */
export async function chartOverlays(sql: Sql, asset: string, fromMs: number, toMs: number): Promise<ChartOverlays> {
  const all = await readCycles(sql, asset)
  const overlays: ChartOverlays['overlays'] = []
  const returns: ChartOverlays['returns'] = []
  for (const kind of STRATEGY_KINDS) {
    const cycles = all.filter((c) => c.strategy === kind)
    const cumulative = cumulativeByExpiry(cycles)
    for (const c of cycles) {
      if (c.expiryMs < fromMs || c.soldAtMs >= toMs) continue
      const cum = c.settled ? cumulative.get(c.expiryMs) : undefined
      overlays.push({
        cycleId: `${kind}:${c.instrument}`,
        strategy: kind,
        side: c.side,
        instrument: c.instrument,
        strike: fromE18(c.strikeE18),
        soldAt: new Date(c.soldAtMs).toISOString(),
        expiry: new Date(c.expiryMs).toISOString(),
        ivAtSale: c.ivAtSaleE18 === null ? null : fromE18(c.ivAtSaleE18),
        outcome: c.outcome,
        cumulativeRealisedReturnPct: cum === undefined ? null : pctString(cum),
      })
    }
    for (const [atMs, cum] of cumulative)
      if (atMs >= fromMs && atMs < toMs)
        returns.push({ strategy: kind, t: new Date(atMs).toISOString(), cumulativeRealisedReturnPct: pctString(cum) })
  }
  overlays.sort((a, b) => a.soldAt.localeCompare(b.soldAt))
  returns.sort((a, b) => a.t.localeCompare(b.t))
  return { overlays: overlays.slice(-MAX_OVERLAYS), returns: returns.slice(-MAX_OVERLAYS) }
}

export async function strategiesRoutes(app: FastifyInstance, opts: StrategiesOptions) {
  const { sql, redis, names, profile } = opts
  const clock = opts.clock ?? systemClock
  const sn: StrategyNames = strategyNames(names)
  const cacheMs = opts.cacheMs ?? STRATEGIES_CACHE_MS
  type Records = Record<StrategyKind, Awaited<ReturnType<typeof strategyRecord>>>
  /**
   * Per asset, what Postgres says (history, statistics, live cycles), reused for `cacheMs` while the
   * asset's strategy sequence number stays: every event that changes a cycle (cycle_opened, fill,
   * window_end, settlement) bumps it. A lost event (Redis down) leaves an answer at most `cacheMs` old.
   */
  const cache = new Map<string, { at: number; seq: number; records: Promise<Records>; live: Promise<LiveCycles> }>()

  function postgresPart(asset: string, seq: number, nowMs: number) {
    const hit = cache.get(asset)
    if (hit && hit.seq === seq && nowMs - hit.at >= 0 && nowMs - hit.at < cacheMs) return hit
    const entry = {
      at: nowMs,
      seq,
      records: (async () => {
        const all = await readCycles(sql, asset)
        const out = {} as Records
        for (const k of STRATEGY_KINDS) out[k] = await strategyRecord(sql, asset, all, k, nowMs)
        return out
      })(),
      live: readLiveCycleState({ sql, redis, names }, asset),
    }
    cache.set(asset, entry)
    const forget = () => {
      if (cache.get(asset) === entry) cache.delete(asset)
    }
    entry.records.catch(forget)
    entry.live.catch(forget)
    return entry
  }

  app.get<{ Params: Type.Static<typeof AssetParams>; Querystring: Type.Static<typeof StrategiesQuery> }>(
    '/:asset/strategies',
    {
      // kept until the next strategy event or price (routes/market/public-cache.ts)
      config: { publicCache: { maxAgeS: 5 } },
      schema: {
        tags: ['market'],
        summary: 'Strategies on an asset: parameters, the current cycle, per-cycle history, statistics with losses',
        params: AssetParams,
        querystring: StrategiesQuery,
        response: {
          200: withCacheHeaders(StrategiesResponse),
          304: NOT_MODIFIED,
          400: { $ref: 'ErrorBody#' },
          404: { $ref: 'ErrorBody#' },
        },
      },
    },
    async (request) => {
      const asset = request.params.asset.toUpperCase()
      if (!Object.hasOwn(profile.sizes, asset)) throw new UnknownAssetError(request.params.asset)
      const limit = request.query.limit ?? 50
      const nowMs = clock.now().getTime()
      const [[latestRaw], [seq]] = await Promise.all([
        readLatestPrices(redis, names, [asset]),
        readStrategySeqs(redis, sn, [asset]),
      ])
      const part = postgresPart(asset, seq ?? 0, nowMs)
      const [recs, live] = await Promise.all([part.records, part.live])
      const current = await currentCycles({ sql, redis, names, profile }, asset, nowMs, latestRaw ?? null, live)
      const kinds = request.query.strategy ? [request.query.strategy] : STRATEGY_KINDS
      return {
        asset,
        profile: profile.name,
        asOf: new Date(nowMs).toISOString(),
        strategies: kinds.map((kind) => {
          const rec = recs[kind]
          const cur = current.find((c) => c.kind === kind)
          return {
            ...strategyDescriptor(kind, asset, profile),
            currentCycle: cur?.currentCycle ?? null,
            currentCycleNote: cur?.currentCycleNote ?? null,
            liveCycles: cur?.liveCycles ?? 0,
            history: rec.history.slice(0, limit),
            historyTotal: rec.history.length,
            statistics: rec.statistics,
          }
        }),
      }
    },
  )
}
