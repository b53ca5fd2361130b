/**
 * The trading steps' side of WS /ws/strategies (docs/market-data.md "Strategy events"): small
 * publishes at the state changes of the placing step (placing/), the fills (fills/) and the wheel
 * runner (wheel/next-leg.ts), through the `StrategyEvents` port (./port.ts; @wh/market implements
 * it). Every figure is the strategy's (aggregated over every user's legs of a cycle), never a user
 * id or one user's amount. A publish never fails a step: a failed read loses the event, never the tick.
 */
import { fromBaseUnits } from '@wh/core'
import type { Sql } from '@wh/db'
import { trimDecimal } from '@wh/exchange'
import type { TradingProfile } from '../profiles'
import type { EventStrategy, StrategyEvents, TradingStrategyEvent } from './port'

/** The strategy a leg belongs to: its wheel's, or the single side it sells. */
export const strategyOf = (wheel: boolean, side: 'put' | 'call'): EventStrategy => (wheel ? 'wheel' : side)
/** Base units (`decimals` places, e18 by default) as the shortest exact decimal string. */
const e18ToDecimal = (v: bigint, decimals = 18) => trimDecimal(fromBaseUnits(v, decimals))

interface CycleTotals {
  strategy: EventStrategy
  asset: string
  instrument: string
  expiry_sec: number
  filled_e18: string
  premium: string
  fees: string
  settlement_cost: string
  collateral: string
  outcome: string | null
  price_e18: string | null
}

/** Totals of the cycles (strategy × instrument) that `positionIds` belong to, over every user's legs. */
async function cycleTotals(sql: Sql, positionIds: readonly string[]): Promise<CycleTotals[]> {
  if (positionIds.length === 0) return []
  return sql<CycleTotals[]>`
    with touched as (
      select distinct p.asset, p.instrument, (p.wheel_id is not null) as wheel, p.side
      from positions p where p.id = any(${positionIds as string[]}::uuid[]) and p.instrument is not null
    )
    select case when t.wheel then 'wheel' else t.side end as strategy, t.asset, t.instrument,
      max(p.expiry_sec)::float8 as expiry_sec, sum(p.filled_e18)::text as filled_e18, sum(p.premium)::text as premium,
      sum(p.fees)::text as fees, (coalesce(sum(p.settlement_cost), 0) + sum(p.close_cost))::text as settlement_cost,
      -- collateral in USDC base units: strike × contracts for puts, the collateral itself for calls is not USD
      sum(case when p.side = 'put' then p.strike_e18 * p.filled_e18 / 1e30 else 0 end)::numeric(78,0)::text as collateral,
      max(p.outcome) as outcome,
      (select f.price_e18::text from position_fills f join positions q on q.id = f.position_id
        -- the latest sale (a buy-back's fill has a negative amount)
        where q.instrument = t.instrument and f.amount_e18 > 0 order by f.traded_at desc limit 1) as price_e18
    from touched t join positions p on p.asset = t.asset and p.instrument = t.instrument
      and (p.wheel_id is not null) = t.wheel and p.side = t.side and p.filled_e18 > 0
    group by t.asset, t.instrument, t.wheel, t.side`
}

/** After fills were recorded: one `fill` event per cycle touched. */
export async function publishFills(
  sql: Sql,
  events: StrategyEvents,
  positionIds: readonly string[],
  at: Date,
): Promise<void> {
  try {
    for (const c of await cycleTotals(sql, positionIds))
      await events.publish(c.asset, {
        ts: at.toISOString(),
        event: 'fill',
        strategy: c.strategy,
        instrument: c.instrument,
        price: e18ToDecimal(BigInt(c.price_e18 ?? '0')),
        cycleContracts: e18ToDecimal(BigInt(c.filled_e18)),
        cyclePremium: e18ToDecimal(BigInt(c.premium), 6),
      })
  } catch {
    // a failed read loses the event, never the tick
  }
}

/** After an instrument settled: one `settlement` event per cycle of it. */
export async function publishSettlement(
  sql: Sql,
  events: StrategyEvents,
  positionIds: readonly string[],
  at: Date,
): Promise<void> {
  try {
    for (const c of await cycleTotals(sql, positionIds)) {
      const net = BigInt(c.premium) - BigInt(c.fees) - BigInt(c.settlement_cost)
      const collateral = BigInt(c.collateral)
      await events.publish(c.asset, {
        ts: at.toISOString(),
        event: 'settlement',
        strategy: c.strategy,
        instrument: c.instrument,
        expiry: new Date(c.expiry_sec * 1000).toISOString(),
        outcome: c.outcome === 'itm' ? 'itm' : 'otm',
        cycleSettlementCost: e18ToDecimal(BigInt(c.settlement_cost), 6),
        // calls are valued at the index at sale by the API; here only puts have a USD collateral
        cycleRealisedReturnPct: collateral > 0n ? pct(net, collateral) : null,
      })
    }
  } catch {
    // a failed read loses the event, never the tick
  }
}

/** net / collateral in percent, 4 decimals, truncated toward zero. */
function pct(net: bigint, collateral: bigint): string {
  const v = (net * 1_000_000n) / collateral // percent × 1e4
  const neg = v < 0n
  const abs = neg ? -v : v
  return `${neg && abs !== 0n ? '-' : ''}${abs / 10_000n}.${(abs % 10_000n).toString().padStart(4, '0')}`
}

const lastCapacity = new Map<string, string>()

/**
 * After a placing run: the `capacity` of each strategy with live legs, published only when it
 * changed since the last run of this process (at most assets × 3 small events per run).
 */
export async function publishCapacity(
  sql: Sql,
  events: StrategyEvents,
  profile: TradingProfile,
  at: Date,
): Promise<void> {
  try {
    const rows = await sql<
      {
        asset: string
        strategy: EventStrategy
        live: number
        open_e18: string
        placing_e18: string
        usdc: string
        underlying: string
      }[]
    >`
      select asset, case when wheel_id is not null then 'wheel' else side end as strategy, count(*)::int as live,
        coalesce(sum(filled_e18) filter (where state in ('open', 'closing')), 0)::text as open_e18,
        coalesce(sum(coalesce(size_e18, 0) - filled_e18) filter (where state = 'placing'), 0)::text as placing_e18,
        coalesce(sum(collateral_amount) filter (where collateral_currency = 'USDC'), 0)::text as usdc,
        coalesce(sum(collateral_amount) filter (where collateral_currency <> 'USDC'), 0)::text as underlying
      from positions where state in ('requested', 'funding', 'placing', 'open', 'closing')
      group by 1, 2 order by 1, 2 limit 16`
    for (const r of rows) {
      const sizes = profile.sizes[r.asset as 'ETH' | 'BTC']
      const decimals = r.asset === 'BTC' ? 8 : 18
      const body: TradingStrategyEvent = {
        ts: at.toISOString(),
        event: 'capacity',
        strategy: r.strategy,
        livePositions: r.live,
        contractsOpen: e18ToDecimal(BigInt(r.open_e18)),
        contractsPlacing: e18ToDecimal(BigInt(r.placing_e18)),
        collateral: { USDC: e18ToDecimal(BigInt(r.usdc), 6), underlying: e18ToDecimal(BigInt(r.underlying), decimals) },
        limits: { minContracts: sizes?.min ?? '0', maxContractsPerUser: sizes?.max ?? '0' },
      }
      const key = `${r.asset}:${r.strategy}`
      const { ts: _ts, ...figures } = body
      const sig = JSON.stringify(figures)
      if (lastCapacity.get(key) === sig) continue
      lastCapacity.set(key, sig)
      await events.publish(r.asset, body)
    }
  } catch {
    // a failed read loses the event, never the tick
  }
}
