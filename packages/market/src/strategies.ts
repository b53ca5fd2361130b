/**
 * The platform's strategies as public data (GET /:asset/strategies, the chart's overlays): per-cycle
 * history aggregated over every user's legs, and statistics that include the losing cycles
 * (docs/market-data.md "Strategies"). Never a user id, never one user's amount.
 *
 * A strategy is `wheel` (legs a wheel opened), `put` or `call` (single legs sold on request). A
 * cycle is one instrument (so one strike and one expiry) a strategy sold on an asset. Money is
 * bigint in USDC base units (6 decimals); ratios are bigint fractions scaled by 1e18 and leave as
 * decimal strings. No float touches a figure.
 */
import type { Sql } from '@wh/db'

export const STRATEGY_KINDS = ['wheel', 'put', 'call'] as const
export type StrategyKind = (typeof STRATEGY_KINDS)[number]

/** Fixed point of every ratio here: 1e18 = 1 (100 %). */
export const RATIO_ONE = 10n ** 18n
const E12 = 10n ** 12n
export const DAY_MS = 86_400_000
export const YEAR_MS = 365 * DAY_MS
/** The short statistics window (the annualised return over 4 weeks). */
export const STATS_WINDOW_MS = 28 * DAY_MS
/** Cycles a history read returns at most (TIGER_STYLE: a bound on everything). */
export const MAX_CYCLES_READ = 5_000

/** One cycle, aggregated over every leg sold in it. Money in USDC base units. */
export interface Cycle {
  readonly strategy: StrategyKind
  readonly side: 'put' | 'call'
  readonly instrument: string
  readonly strikeE18: bigint
  readonly expiryMs: number
  /** the first fill of the cycle (or the first leg's creation when fills are not recorded) */
  readonly soldAtMs: number
  readonly legs: number
  /** contracts sold, e18 */
  readonly filledE18: bigint
  /** gross premium received */
  readonly premium: bigint
  /** exchange + platform fees */
  readonly fees: bigint
  /** paid at an in-the-money expiry (0 out of the money or still open) */
  readonly settlementCost: bigint
  /** every leg settled: the cycle's result is realised */
  readonly settled: boolean
  readonly outcome: 'itm' | 'otm' | null
  /** the index at the first fill (the 1m candle's close), null when no candle is stored */
  readonly indexAtSaleE18: bigint | null
  /**
   * the option's mark IV when its legs were sold (e18 fraction): the legs' `iv_e18` (recorded when
   * each chose the instrument) weighted by contracts sold; null when no leg recorded one
   */
  readonly ivAtSaleE18: bigint | null
  /** what the cycle tied up, in USDC: strike × contracts (put), index at sale × contracts (call) */
  readonly collateral: bigint
}

/** premium − fees − settlement cost (can be negative: a losing cycle). */
export const netOf = (c: Cycle): bigint => c.premium - c.fees - c.settlementCost

/** A ratio num / den as a 1e18 fraction, truncated toward zero; 0 for an empty denominator. */
export function ratio(num: bigint, den: bigint): bigint {
  return den === 0n ? 0n : (num * RATIO_ONE) / den
}

/** The cycle's realised return on its collateral; null while open. */
export function cycleReturn(c: Cycle): bigint | null {
  return c.settled ? ratio(netOf(c), c.collateral) : null
}

/** Gross premium over the collateral (what the cycle yields if it expires out of the money). */
export function premiumYield(c: Cycle): bigint {
  return ratio(c.premium - c.fees, c.collateral)
}

/** One point of a strategy's realised return: the cycles that settled at one expiry, taken together. */
export interface ReturnPoint {
  readonly atMs: number
  /** the period's return: Σ net / Σ collateral of the cycles settled at `atMs` */
  readonly periodReturn: bigint
  /** compounded over every earlier period: Π(1 + r) − 1 */
  readonly cumulative: bigint
}

/**
 * The cumulative realised return of settled cycles, one point per expiry, oldest first. Cycles
 * that settle at the same expiry ran side by side (different users, strikes), so they form one
 * period (their aggregate return), and periods compound one after the other.
 */
export function returnSeries(cycles: readonly Cycle[]): ReturnPoint[] {
  const byExpiry = new Map<number, { net: bigint; collateral: bigint }>()
  for (const c of cycles) {
    if (!c.settled) continue
    const p = byExpiry.get(c.expiryMs) ?? { net: 0n, collateral: 0n }
    p.net += netOf(c)
    p.collateral += c.collateral
    byExpiry.set(c.expiryMs, p)
  }
  let growth = RATIO_ONE
  return [...byExpiry.entries()]
    .sort(([a], [b]) => a - b)
    .map(([atMs, p]) => {
      const periodReturn = ratio(p.net, p.collateral)
      growth = (growth * (RATIO_ONE + periodReturn)) / RATIO_ONE
      return { atMs, periodReturn, cumulative: growth - RATIO_ONE }
    })
}

/**
 * The largest fall from a running peak, as a fraction of that peak (≥ 0), of a value series that
 * starts at `start` (1e18 for a return index, the first close for prices).
 */
export function maxDrawdown(values: readonly bigint[]): bigint {
  let peak: bigint | undefined
  let worst = 0n
  for (const v of values) {
    if (peak === undefined || v > peak) peak = v
    if (peak > 0n) {
      const dd = ((peak - v) * RATIO_ONE) / peak
      if (dd > worst) worst = dd
    }
  }
  return worst
}

/** Simple (not compounded) annualisation: r × year / elapsed. Integer only; null for no time. */
export function annualise(r: bigint, elapsedMs: number): bigint | null {
  if (elapsedMs <= 0) return null
  return (r * BigInt(YEAR_MS)) / BigInt(Math.round(elapsedMs))
}

export interface StrategyWindowStats {
  readonly fromMs: number
  readonly toMs: number
  readonly settledCycles: number
  readonly losingCycles: number
  /** compounded realised return of the periods settled in the window; null without any */
  readonly realisedReturn: bigint | null
  readonly annualisedReturn: bigint | null
  /** settled cycles with net ≥ 0 over settled cycles */
  readonly hitRatio: bigint | null
  /** settled cycles that expired out of the money over settled cycles */
  readonly otmRatio: bigint | null
  /** the mean return of the losing cycles (negative); null when none lost */
  readonly averageLoss: bigint | null
  /** of the cumulative return index (1 + cumulative), from the window's start */
  readonly maxDrawdown: bigint | null
}

/**
 * Statistics of the cycles that settled in (fromMs, toMs]. Losing cycles count in every figure:
 * the realised return and the drawdown compound them, the hit ratio counts them, the average loss
 * is theirs.
 */
export function windowStats(cycles: readonly Cycle[], fromMs: number, toMs: number): StrategyWindowStats {
  const settled = cycles.filter((c) => c.settled && c.expiryMs > fromMs && c.expiryMs <= toMs)
  const returns = settled.map((c) => cycleReturn(c) as bigint)
  const losses = returns.filter((r) => r < 0n)
  const series = returnSeries(settled)
  const last = series[series.length - 1]
  const n = BigInt(settled.length)
  return {
    fromMs,
    toMs,
    settledCycles: settled.length,
    losingCycles: losses.length,
    realisedReturn: last ? last.cumulative : null,
    annualisedReturn: last ? annualise(last.cumulative, toMs - fromMs) : null,
    hitRatio: n === 0n ? null : ratio(BigInt(settled.filter((c) => netOf(c) >= 0n).length), n),
    otmRatio: n === 0n ? null : ratio(BigInt(settled.filter((c) => c.outcome === 'otm').length), n),
    averageLoss: losses.length === 0 ? null : losses.reduce((a, b) => a + b, 0n) / BigInt(losses.length),
    maxDrawdown: last ? maxDrawdown([RATIO_ONE, ...series.map((p) => RATIO_ONE + p.cumulative)]) : null,
  }
}

export interface HoldStats {
  readonly fromMs: number
  readonly toMs: number
  readonly startPriceE18: bigint
  readonly endPriceE18: bigint
  readonly return: bigint
  readonly annualisedReturn: bigint | null
  readonly maxDrawdown: bigint
}

/**
 * Holding the asset over the same window: closes from the window's start to its end (the first
 * is the start price, the last the end price); null with fewer than two.
 */
export function holdStats(closesE18: readonly bigint[], fromMs: number, toMs: number): HoldStats | null {
  const first = closesE18[0]
  const last = closesE18[closesE18.length - 1]
  if (closesE18.length < 2 || first === undefined || last === undefined || first <= 0n) return null
  const r = ratio(last - first, first)
  return {
    fromMs,
    toMs,
    startPriceE18: first,
    endPriceE18: last,
    return: r,
    annualisedReturn: annualise(r, toMs - fromMs),
    maxDrawdown: maxDrawdown(closesE18),
  }
}

/** A 1e18 fraction as a percent string with `dp` decimals, truncated toward zero ("-1.2345"). */
export function pctString(fractionE18: bigint, dp = 4): string {
  return scaledString(fractionE18 * 100n, dp)
}

/** A 1e18 fraction as a decimal string with `dp` decimals, truncated toward zero ("0.7500"). */
export function ratioString(fractionE18: bigint, dp = 4): string {
  return scaledString(fractionE18, dp)
}

function scaledString(e18: bigint, dp: number): string {
  const neg = e18 < 0n
  const abs = neg ? -e18 : e18
  const unit = 10n ** BigInt(18 - dp)
  const kept = abs / unit
  const scale = 10n ** BigInt(dp)
  const int = kept / scale
  const frac = (kept % scale).toString().padStart(dp, '0')
  const body = dp > 0 ? `${int}.${frac}` : `${int}`
  return neg && kept !== 0n ? `-${body}` : body
}

interface CycleRow {
  strategy: StrategyKind
  side: 'put' | 'call'
  instrument: string
  strike_e18: string
  expiry_sec: number
  sold_at: Date
  legs: number
  filled_e18: string
  premium: string
  fees: string
  settlement_cost: string
  settled: boolean
  itm: boolean
  index_e18: string | null
  iv_weighted: string | null
  iv_filled: string | null
}

/**
 * Every cycle of `asset` (sold legs only: filled > 0), oldest expiry first, at most
 * MAX_CYCLES_READ (the newest). One statement: legs grouped by strategy and instrument, the
 * index at the first fill from the 1m candles, the IV at sale from the legs' `iv_e18`.
 */
export async function readCycles(sql: Sql, asset: string): Promise<Cycle[]> {
  const rows = await sql<CycleRow[]>`
    with legs as (
      select case when p.wheel_id is not null then 'wheel' else p.side end as strategy, p.side, p.instrument,
        p.strike_e18, p.expiry_sec, p.state, p.outcome, p.filled_e18, p.premium, p.fees, p.iv_e18,
        -- a buy-back's cost counts like a settlement's (the journal books both to expense:settlement)
        coalesce(p.settlement_cost, 0) + p.close_cost as settlement_cost,
        coalesce((select min(f.traded_at) from position_fills f where f.position_id = p.id), p.created_at) as sold_at
      from positions p
      where p.asset = ${asset} and p.instrument is not null and p.expiry_sec is not null
        and p.strike_e18 is not null and p.filled_e18 > 0
        and p.state in ('open', 'closing', 'settled', 'closed')
    ), cycles as (
      select strategy, side, instrument, min(strike_e18) as strike_e18, expiry_sec, min(sold_at) as sold_at,
        count(*)::int as legs, sum(filled_e18) as filled_e18, sum(premium) as premium, sum(fees) as fees,
        sum(settlement_cost) as settlement_cost, bool_and(state in ('settled', 'closed')) as settled,
        bool_or(outcome = 'itm') as itm,
        sum(iv_e18 * filled_e18) filter (where iv_e18 is not null) as iv_weighted,
        sum(filled_e18) filter (where iv_e18 is not null) as iv_filled
      from legs group by strategy, side, instrument, expiry_sec
      order by expiry_sec desc, instrument
      limit ${MAX_CYCLES_READ}
    )
    select c.strategy, c.side, c.instrument, c.strike_e18::text, c.expiry_sec::float8 as expiry_sec, c.sold_at,
      c.legs, c.filled_e18::text, c.premium::text, c.fees::text, c.settlement_cost::text, c.settled, c.itm,
      c.iv_weighted::text, c.iv_filled::text,
      (select k.close_e18::text from price_candles k where k.asset = ${asset} and k.interval = '1m'
        and k.bucket_start <= c.sold_at order by k.bucket_start desc limit 1) as index_e18
    from cycles c
    order by c.expiry_sec, c.instrument, c.strategy`
  return rows.map((r) => {
    const filledE18 = BigInt(r.filled_e18)
    const strikeE18 = BigInt(r.strike_e18)
    const indexAtSaleE18 = r.index_e18 === null ? null : BigInt(r.index_e18)
    const ivFilledE18 = r.iv_filled === null ? 0n : BigInt(r.iv_filled)
    // a call ties up the underlying: valued at the index at the sale (the strike when no candle is stored)
    const perContractE18 = r.side === 'put' ? strikeE18 : (indexAtSaleE18 ?? strikeE18)
    return {
      strategy: r.strategy,
      side: r.side,
      instrument: r.instrument,
      strikeE18,
      expiryMs: r.expiry_sec * 1000,
      soldAtMs: r.sold_at.getTime(),
      legs: r.legs,
      filledE18,
      premium: BigInt(r.premium),
      fees: BigInt(r.fees),
      settlementCost: BigInt(r.settlement_cost),
      settled: r.settled,
      outcome: r.settled ? (r.itm ? 'itm' : 'otm') : null,
      indexAtSaleE18,
      ivAtSaleE18: ivFilledE18 > 0n && r.iv_weighted !== null ? BigInt(r.iv_weighted) / ivFilledE18 : null,
      collateral: (filledE18 * perContractE18) / RATIO_ONE / E12,
    }
  })
}

/**
 * The closes that describe holding `asset` over [fromMs, toMs]: the last 1m close at or before
 * `fromMs` (else the first after it), the 1d closes in between (at most 1,000), and the last
 * 1m close at or before `toMs`.
 */
export async function readHoldCloses(sql: Sql, asset: string, fromMs: number, toMs: number): Promise<bigint[]> {
  const from = new Date(fromMs)
  const to = new Date(toMs)
  const [ends] = await sql<{ start_e18: string | null; end_e18: string | null }[]>`
    select coalesce(
        (select close_e18 from price_candles where asset = ${asset} and interval = '1m' and bucket_start <= ${from}
          order by bucket_start desc limit 1),
        (select close_e18 from price_candles where asset = ${asset} and interval = '1m' and bucket_start > ${from}
          and bucket_start <= ${to} order by bucket_start limit 1))::text as start_e18,
      (select close_e18 from price_candles where asset = ${asset} and interval = '1m' and bucket_start <= ${to}
        order by bucket_start desc limit 1)::text as end_e18`
  if (!ends?.start_e18 || !ends.end_e18) return []
  // whole days inside the window only: a day still running at `to` would close after it
  const days = await sql<{ close_e18: string }[]>`
    select close_e18::text from price_candles
    where asset = ${asset} and interval = '1d' and bucket_start > ${from}
      and bucket_start + interval '1 day' <= ${to}
    order by bucket_start limit 1000`
  return [ends.start_e18, ...days.map((d) => d.close_e18), ends.end_e18].map((v) => BigInt(v))
}
