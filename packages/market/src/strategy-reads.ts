/**
 * The strategies read model (docs/market-data.md "Strategies"): what each strategy is on an asset
 * under TRADING_PROFILE, its per-cycle history and statistics with the losing cycles in every
 * figure against holding the asset, the chart's overlays, and `strategiesReader`, the answer of
 * GET /:asset/strategies with its Postgres part reused until the next strategy event.
 */
import { type Clock, systemClock } from '@wh/core'
import type { Sql } from '@wh/db'
import { fromE18 } from '@wh/exchange'
import type { TradingProfile } from '@wh/trading'
import type { Redis } from 'ioredis'
import { type MarketNames, readLatestPrices } from './channels'
import { UnknownAssetError } from './errors'
import {
  type Cycle,
  cycleReturn,
  holdStats,
  netOf,
  pctString,
  premiumYield,
  RATIO_ONE,
  ratioString,
  readCycles,
  readHoldCloses,
  returnSeries,
  STATS_WINDOW_MS,
  STRATEGY_KINDS,
  type StrategyKind,
  windowStats,
} from './strategies'
import { readStrategySeqs, strategyNames } from './strategies-events'
import { currentCycles, type LiveCycles, readLiveCycleState, usdc } from './strategy-cycles'

/** Default reuse of the Postgres part; a strategy event (new sequence number) ends it sooner. */
export const STRATEGIES_CACHE_MS = 2_000
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

export interface StrategiesReaderOptions {
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

type Records = Record<StrategyKind, Awaited<ReturnType<typeof strategyRecord>>>
interface PostgresPart {
  readonly at: number
  readonly seq: number
  readonly records: Promise<Records>
  readonly live: Promise<LiveCycles>
}

/**
 * GET /:asset/strategies as a function: `read(asset, { strategy, limit })`. Per asset, what
 * Postgres says (history, statistics, live cycles) is reused for `cacheMs` while the asset's
 * strategy sequence number stays: every event that changes a cycle (cycle_opened, fill,
 * window_end, settlement) bumps it. A lost event (Redis down) leaves an answer at most `cacheMs` old.
 */
export function strategiesReader(opts: StrategiesReaderOptions) {
  const { sql, redis, names, profile } = opts
  const clock = opts.clock ?? systemClock
  const cacheMs = opts.cacheMs ?? STRATEGIES_CACHE_MS
  const cache = new Map<string, PostgresPart>()

  function postgresPart(asset: string, seq: number, nowMs: number): PostgresPart {
    const hit = cache.get(asset)
    if (hit && hit.seq === seq && nowMs - hit.at >= 0 && nowMs - hit.at < cacheMs) return hit
    const records = (async () => {
      const all = await readCycles(sql, asset)
      const out = {} as Records
      for (const k of STRATEGY_KINDS) out[k] = await strategyRecord(sql, asset, all, k, nowMs)
      return out
    })()
    const entry = { at: nowMs, seq, records, live: readLiveCycleState({ sql, redis, names }, asset) }
    cache.set(asset, entry)
    const forget = () => {
      if (cache.get(asset) === entry) cache.delete(asset)
    }
    entry.records.catch(forget)
    entry.live.catch(forget)
    return entry
  }

  return async function read(assetParam: string, query: { strategy?: StrategyKind; limit?: number }) {
    const asset = assetParam.toUpperCase()
    if (!Object.hasOwn(profile.sizes, asset)) throw new UnknownAssetError(assetParam)
    const limit = query.limit ?? 50
    const nowMs = clock.now().getTime()
    const [[latestRaw], [seq]] = await Promise.all([
      readLatestPrices(redis, names, [asset]),
      readStrategySeqs(redis, strategyNames(names), [asset]),
    ])
    const part = postgresPart(asset, seq ?? 0, nowMs)
    const [recs, live] = await Promise.all([part.records, part.live])
    const current = await currentCycles({ sql, redis, names, profile }, asset, nowMs, latestRaw ?? null, live)
    const kinds = query.strategy ? [query.strategy] : STRATEGY_KINDS
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
  }
}
