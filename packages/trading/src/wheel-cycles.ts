/**
 * A wheel's cycles with their economics (docs/trading.md "Economics"): each leg the wheel opened,
 * its premium, the exchange's and the platform's fees (summed from its fills, where they are
 * recorded apart), what expiry or a buy-back cost, its net and the running sum, and the wheel's
 * realised return against holding the underlying from the start. Reads only.
 */
import { NotFoundError } from '@wh/core'
import type { Sql } from '@wh/db'
import { type CycleFigures, cumulativeNets, cycleNet, type WheelVersusHold, wheelVersusHold } from './economics'

/** The most legs one wheel's answer reads (a daily wheel opens one a day: years of them) */
export const WHEEL_CYCLES_MAX = 5_000

export interface WheelCycle extends CycleFigures {
  readonly positionId: string
  /** 1 for the wheel's first leg */
  readonly cycle: number
  readonly side: 'put' | 'call'
  readonly state: string
  readonly instrument: string | null
  readonly strikeE18: bigint | null
  readonly expirySec: number | null
  /** contracts sold less those bought back */
  readonly sizeE18: bigint
  readonly outcome: 'itm' | 'otm' | null
  readonly net: bigint
  readonly cumulativeNet: bigint
  readonly createdAt: Date
  /** Postgres' own print of created_at (microseconds), for the cursor */
  readonly createdAtText: string
  readonly closedAt: Date | null
}

export interface WheelCycles {
  readonly wheelId: string
  readonly asset: string
  readonly state: string
  /** the first leg's collateral, USDC base units */
  readonly startAmount: bigint
  readonly startIndexE18: bigint | null
  readonly indexE18: bigint | null
  readonly cumulativeNet: bigint
  readonly versusHold: WheelVersusHold
  /** oldest first */
  readonly cycles: readonly WheelCycle[]
}

interface LegRow {
  id: string
  side: 'put' | 'call'
  state: string
  instrument: string | null
  strike_e18: string | null
  expiry_sec: number | null
  filled_e18: string
  bought_e18: string
  outcome: 'itm' | 'otm' | null
  collateral_amount: string
  premium: string
  exchange_fee: string
  platform_fee: string
  settlement_cost: string | null
  close_cost: string
  created_at: Date
  created_at_text: string
  closed_at: Date | null
}

/** The index (e18) from the stored 1m candles: the last close at or before `atMs`, else the first after. */
async function indexAt(sql: Sql, asset: string, atMs: number): Promise<bigint | null> {
  const at = new Date(atMs)
  const [before] = await sql<{ close_e18: string }[]>`select close_e18::text from price_candles
    where asset = ${asset} and interval = '1m' and bucket_start <= ${at} order by bucket_start desc limit 1`
  if (before) return BigInt(before.close_e18)
  const [after] = await sql<{ close_e18: string }[]>`select close_e18::text from price_candles
    where asset = ${asset} and interval = '1m' and bucket_start > ${at} order by bucket_start limit 1`
  return after ? BigInt(after.close_e18) : null
}

/** The caller's wheel with every leg's economics; NotFoundError for another user's or no wheel. */
export async function wheelCycles(sql: Sql, userId: string, wheelId: string, nowMs: number): Promise<WheelCycles> {
  const [w] = await sql<{ id: string; asset: string; state: string; created_at: Date }[]>`
    select id, asset, state, created_at from wheels where id = ${wheelId} and user_id = ${userId}`
  if (!w) throw new NotFoundError('wheel')
  const rows = await sql<LegRow[]>`
    select p.id, p.side, p.state, p.instrument, p.strike_e18::text, p.expiry_sec::float8 as expiry_sec,
      p.filled_e18::text, p.bought_e18::text, p.outcome, p.collateral_amount::text, p.premium::text,
      coalesce(f.exchange_fee, 0)::text as exchange_fee, coalesce(f.platform_fee, 0)::text as platform_fee,
      p.settlement_cost::text, p.close_cost::text, p.created_at, p.created_at::text as created_at_text, p.closed_at
    from positions p
    left join lateral (select sum(exchange_fee) as exchange_fee, sum(platform_fee) as platform_fee
      from position_fills where position_id = p.id) f on true
    where p.wheel_id = ${wheelId} and p.user_id = ${userId}
    order by p.created_at, p.id
    limit ${WHEEL_CYCLES_MAX}`
  const figures = rows.map(
    (r): CycleFigures => ({
      premium: BigInt(r.premium),
      exchangeFee: BigInt(r.exchange_fee),
      platformFee: BigInt(r.platform_fee),
      settlementCost: r.settlement_cost === null ? 0n : BigInt(r.settlement_cost),
      closeCost: BigInt(r.close_cost),
    }),
  )
  const sums = cumulativeNets(figures)
  const cycles = rows.map((r, k): WheelCycle => {
    const f = figures[k] as CycleFigures
    return {
      ...f,
      positionId: r.id,
      cycle: k + 1,
      side: r.side,
      state: r.state,
      instrument: r.instrument,
      strikeE18: r.strike_e18 === null ? null : BigInt(r.strike_e18),
      expirySec: r.expiry_sec,
      sizeE18: BigInt(r.filled_e18) - BigInt(r.bought_e18),
      outcome: r.outcome,
      net: cycleNet(f),
      cumulativeNet: sums[k] as bigint,
      createdAt: r.created_at,
      createdAtText: r.created_at_text,
      closedAt: r.closed_at,
    }
  })
  // the wheel starts with USDC: its first leg is a put of that collateral
  const startAmount = rows[0] ? BigInt(rows[0].collateral_amount) : 0n
  const startIndexE18 = await indexAt(sql, w.asset, w.created_at.getTime())
  const indexE18 = await indexAt(sql, w.asset, nowMs)
  const cumulativeNet = sums.at(-1) ?? 0n
  return {
    wheelId: w.id,
    asset: w.asset,
    state: w.state,
    startAmount,
    startIndexE18,
    indexE18,
    cumulativeNet,
    versusHold: wheelVersusHold(startAmount, cumulativeNet, startIndexE18, indexE18),
    cycles,
  }
}
