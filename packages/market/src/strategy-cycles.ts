/**
 * The cycle each strategy sells now (docs/market-data.md "Strategies"): the live cycles of an asset
 * (Postgres) with the quotes they were chosen at (Redis), or, without one, what the profile would
 * sell from the cached tickers. Read by GET /:asset/strategies and the /ws/strategies snapshot.
 */
import type { Sql } from '@wh/db'
import { fromE18, toE18 } from '@wh/exchange'
import { chooseExpiry, chooseStrike, type OptionQuote, type TradingProfile } from '@wh/trading'
import type { Redis } from 'ioredis'
import { type MarketNames, readLatestPrices } from './channels'
import type { PriceUpdate } from './messages'
import { pctString, RATIO_ONE, STRATEGY_KINDS, type StrategyKind } from './strategies'
import { type ChosenQuote, readChosenQuotes, strategyNames } from './strategies-events'

const E12 = 10n ** 12n
/** USDC base units (6 decimals) as a decimal string. */
export const usdc = (v: bigint) => fromE18(v * E12)

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
