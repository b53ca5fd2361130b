/**
 * GET /positions as the API shows it: the caller's positions newest first, cursor-paged, with
 * fills, premium, each fee and realised P&L, and their wheels (docs/trading.md).
 */
import { PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX } from '@wh/api-schemas/positions'
import type { LegSettings } from '@wh/api-schemas/wheels'
import { decimalsOf, fromBaseUnits } from '@wh/core'
import type { Sql } from '@wh/db'
import type { PositionState, TradingProfile } from '@wh/trading'
import type Type from 'typebox'
import { decodeCursor, encodeCursor, pageLimit } from '../../lib/page'
import { type WheelViewRow, wheelColumns, wheelItem } from '../wheels/view'

interface Row {
  id: string
  wheel_id: string | null
  asset: string
  side: 'put' | 'call'
  state: PositionState
  collateral_currency: string
  collateral_amount: string
  instrument: string | null
  strike_e18: string | null
  expiry_sec: number | null
  window_ends_at: Date | null
  size_e18: string | null
  filled_e18: string
  premium: string
  fees: string
  exchange_fee: string
  platform_fee: string
  settlement_cost: string | null
  outcome: 'itm' | 'otm' | null
  bought_e18: string
  close_cost: string
  close_limit_e18: string | null
  fills: number
  cancel_requested_at: Date | null
  reason: string | null
  /** a wheel's leg: the settings it was chosen with (docs/trading.md "Wheel settings") */
  leg_settings: Type.Static<typeof LegSettings> | null
  created_at: Date
  updated_at: Date
  closed_at: Date | null
  created_at_text: string
}

export const USDC = 6
export const E18 = 18

const e18 = (v: string | null) => (v === null ? null : fromBaseUnits(BigInt(v), E18))

export function item(r: Row) {
  const collateralDecimals = decimalsOf(r.collateral_currency) ?? 0
  const premium = BigInt(r.premium)
  const fees = BigInt(r.fees)
  const settlement = r.settlement_cost === null ? 0n : BigInt(r.settlement_cost)
  const closeCost = BigInt(r.close_cost)
  return {
    id: r.id,
    wheelId: r.wheel_id,
    asset: r.asset,
    side: r.side,
    state: r.state,
    collateralCurrency: r.collateral_currency,
    collateral: fromBaseUnits(BigInt(r.collateral_amount), collateralDecimals),
    instrument: r.instrument,
    strike: e18(r.strike_e18),
    expiry: r.expiry_sec === null ? null : new Date(r.expiry_sec * 1000).toISOString(),
    windowEndsAt: r.state === 'placing' ? (r.window_ends_at?.toISOString() ?? null) : null,
    size: e18(r.size_e18),
    filled: fromBaseUnits(BigInt(r.filled_e18), E18),
    premium: fromBaseUnits(premium, USDC),
    fees: fromBaseUnits(fees, USDC),
    exchangeFees: fromBaseUnits(BigInt(r.exchange_fee), USDC),
    platformFee: fromBaseUnits(BigInt(r.platform_fee), USDC),
    settlementCost: r.settlement_cost === null ? null : fromBaseUnits(settlement, USDC),
    outcome: r.outcome,
    bought: fromBaseUnits(BigInt(r.bought_e18), E18),
    closeCost: fromBaseUnits(closeCost, USDC),
    closeLimit: r.state === 'closing' ? e18(r.close_limit_e18) : null,
    realizedPnl: fromBaseUnits(premium - fees - settlement - closeCost, USDC),
    fills: r.fills,
    cancelRequested: r.cancel_requested_at !== null,
    reason: r.reason,
    legSettings: r.leg_settings,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
    closedAt: r.closed_at?.toISOString() ?? null,
  }
}

/** The caller's positions (a page) and their wheels: every wheel not stopped, and those of the page. */
export async function listPositions(
  sql: Sql,
  userId: string,
  query: { state?: PositionState; limit?: number; cursor?: string },
  profile: TradingProfile,
) {
  const limit = pageLimit(query.limit, PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX)
  const after = query.cursor ? decodeCursor(query.cursor) : undefined
  const rows = await sql<Row[]>`
    select p.id, p.wheel_id, p.asset, p.side, p.state, p.collateral_currency, p.collateral_amount, p.instrument,
      p.strike_e18, p.expiry_sec::float8 as expiry_sec, p.window_ends_at, p.size_e18, p.filled_e18, p.premium, p.fees, p.settlement_cost, p.outcome,
      p.bought_e18, p.close_cost, p.close_limit_e18,
      (select count(*)::int from position_fills f where f.position_id = p.id) as fills,
      (select coalesce(sum(f.exchange_fee), 0)::text from position_fills f where f.position_id = p.id) as exchange_fee,
      (select coalesce(sum(f.platform_fee), 0)::text from position_fills f where f.position_id = p.id) as platform_fee,
      p.cancel_requested_at, p.reason, p.leg_settings, p.created_at, p.updated_at, p.closed_at, p.created_at::text as created_at_text
    from positions p
    where p.user_id = ${userId}
      ${query.state ? sql`and p.state = ${query.state}` : sql``}
      ${after ? sql`and (p.created_at, p.id) < (${after.createdAt}::timestamptz, ${after.id}::uuid)` : sql``}
    order by p.created_at desc, p.id desc
    limit ${limit + 1}`
  const page = rows.slice(0, limit)
  const last = page.at(-1)
  const wheelIds = [...new Set(page.map((r) => r.wheel_id).filter((w): w is string => w !== null))]
  const wheels = await sql<WheelViewRow[]>`
    select ${wheelColumns(sql)}
    from wheels where user_id = ${userId} and (state <> 'stopped' or id = any(${wheelIds}::uuid[]))
    order by created_at desc`
  return {
    wheels: wheels.map((w) => wheelItem(w, profile)),
    positions: page.map(item),
    nextCursor: rows.length > limit && last ? encodeCursor(last) : null,
  }
}
