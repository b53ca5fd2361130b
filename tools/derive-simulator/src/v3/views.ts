/**
 * The simulator's state in v3's wire shapes (@wh/exchange V3Wire, generated from the published spec), built
 * on the engine's base views (../views.ts, in the shapes of @wh/exchange types) with v3's
 * field names and extra fields (docs/exchange-v3.md).
 */

import type * as T from '@wh/exchange'
import type { V3Wire as W } from '@wh/exchange'
import { fromE18 } from '@wh/exchange'
import { COLLATERALS, isCollateralName, OPTION_ASSETS, PERP_ASSETS } from '../assets'
import type { SimEngine } from '../engine'
import type { SimInstrument, SimOrder, SimSubaccount, SimTrade } from '../sim-types'
import { instrumentView, orderView, subaccountView, tickerView, tradeView } from '../views'

/** Manager id of the standard-margin risk universe the simulator's subaccounts sit in. */
export const SIM_SM_MANAGER_ID = 1
const ZERO_STATS: W.DailyTradingStatistics = { c: '0', h: '0', l: '0', n: 0, oi: '0', p: '0', pr: '0', v: '0' }

export function instrumentV3(engine: SimEngine, i: SimInstrument): W.Instrument {
  const v = instrumentView(engine, i)
  const { static_interest_rate: _, ...perp } = v.perp_details ?? { static_interest_rate: '' }
  return {
    ...v,
    perp_details: v.perp_details ? (perp as W.PerpDetails) : null,
    fifo_min_allocation: '0',
    pro_rata_amount_step: v.amount_step,
    pro_rata_fraction: '0',
  }
}

export function tickerSlim(engine: SimEngine, i: SimInstrument): W.TickerSlimSnapshot {
  const t = tickerView(engine, i)
  const g = t.option_pricing
  return {
    a: t.best_ask_price,
    A: t.best_ask_amount,
    b: t.best_bid_price,
    B: t.best_bid_amount,
    I: t.index_price,
    M: t.mark_price,
    f: t.perp_details ? t.perp_details.funding_rate : null,
    t: t.timestamp,
    maxp: t.max_price,
    minp: t.min_price,
    stats: ZERO_STATS,
    option_pricing: g
      ? {
          ai: g.ask_iv,
          bi: g.bid_iv,
          d: g.delta,
          df: g.discount_factor,
          f: g.forward_price,
          g: g.gamma,
          i: g.iv,
          m: g.mark_price,
          r: g.rho,
          t: g.theta,
          v: g.vega,
        }
      : null,
  }
}

export function orderV3(o: SimOrder): W.Order {
  const { nonce: _, ...v } = orderView(o)
  return {
    ...v,
    nonce: o.nonce,
    cancel_reason: o.cancelReason as W.CancelReason,
    extra_fee: '0',
    quote_id: null,
    replaced_order_id: null,
    signed_limit_price: null,
    trigger_price: null,
  }
}

function batchOf(tx: T.TxStatus): W.BatchStatus {
  return tx === 'settled' ? 'Settled' : tx === 'reverted' ? 'ExecutingError' : 'Batching'
}

export function tradeV3(t: SimTrade): W.TradeHistoryResponse {
  const { transaction_id, tx_status, ...v } = tradeView(t)
  return {
    ...v,
    op_uuid: transaction_id,
    batch_status: batchOf(tx_status),
    expected_rebate: '0',
    extra_fee: '0',
    quote_id: null,
    rfq_id: null,
    realized_pnl_excl_fees: v.realized_pnl,
  }
}

function collateralV3(c: T.Collateral): W.Collateral {
  return {
    ...c,
    amount_step: '0.000001',
    average_price: c.mark_price,
    average_price_excl_fees: c.mark_price,
    creation_timestamp: 0,
    delta: '1',
    delta_currency: c.currency,
    open_orders_margin: '0',
    realized_pnl: '0',
    realized_pnl_excl_fees: '0',
    total_fees: '0',
    unrealized_pnl: '0',
    unrealized_pnl_excl_fees: '0',
  }
}

function positionV3(engine: SimEngine, p: T.Position): W.Position {
  const inst = engine.catalog.get(p.instrument_name)
  return {
    ...p,
    amount_step: inst ? fromE18(inst.amountStepE18) : '0',
    average_price_excl_fees: p.average_price,
    gamma: '0',
    theta: '0',
    vega: '0',
    leverage: null,
    liquidation_price: null,
    net_settlements: '0',
    open_orders_margin: '0',
    realized_pnl_excl_fees: p.realized_pnl,
    total_fees: '0',
    unrealized_pnl_excl_fees: p.unrealized_pnl,
  }
}

export function collateralsV3(engine: SimEngine, sub: SimSubaccount): W.Collateral[] {
  return subaccountView(engine, sub).collaterals.map(collateralV3)
}

export function positionsV3(engine: SimEngine, sub: SimSubaccount): W.Position[] {
  return subaccountView(engine, sub).positions.map((p) => positionV3(engine, p))
}

export function subaccountV3(engine: SimEngine, sub: SimSubaccount): W.Subaccount {
  const v = subaccountView(engine, sub)
  return {
    ...v,
    currency: [v.currency],
    collaterals: v.collaterals.map(collateralV3),
    positions: v.positions.map((p) => positionV3(engine, p)),
    open_orders: [...engine.orders.values()]
      .filter((o) => o.subaccountId === sub.id && o.status === 'open')
      .map(orderV3),
    collaterals_initial_margin: v.collaterals_value,
    collaterals_maintenance_margin: v.collaterals_value,
    positions_initial_margin: v.initial_margin,
    positions_maintenance_margin: v.maintenance_margin,
    open_orders_margin: '0',
    projected_margin_change: '0',
    mm_credits: '0',
    failed_to_fetch: false,
    manager_id: SIM_SM_MANAGER_ID,
    risk_universe_id: SIM_SM_MANAGER_ID,
    vault_deposit_holds: [],
  }
}

export function currencyV3(engine: SimEngine, name: string): W.Currency | undefined {
  if (!isCollateralName(name)) return undefined
  const c = COLLATERALS[name]
  const u = name === 'USDC' ? null : name
  const oi = { current_open_interest: '0', interest_cap: '0' }
  const universe = { oi, risk_universe_id: SIM_SM_MANAGER_ID, risk_universe_name: 'SIM' }
  const lending = {
    supply_apy: fromE18(engine.supplyApyE18),
    borrow_apy: fromE18(engine.borrowApyE18),
    total_borrow: '0',
    total_borrow_cap: '0',
  }
  return {
    currency: name,
    market_type: u ? 'ALL' : 'CASH',
    spot_price: u ? fromE18(engine.market.indexE18(u)) : '1',
    spot: [
      {
        address: c.address,
        name,
        erc20: { decimals: c.decimals, underlying_erc20: c.underlyingErc20 },
        min_deposit_usd: '0',
        universes: [
          {
            ...universe,
            lending,
            pm2_im_discount: '0',
            pm2_mm_discount: '0',
            srm_im_discount: '0',
            srm_mm_discount: '0',
          },
        ],
      },
    ],
    perp: u ? { address: PERP_ASSETS[u], name: `${u}-PERP`, universes: [universe] } : null,
    option: u ? { address: OPTION_ASSETS[u], name: `${u}-OPTION`, universes: [universe] } : null,
    managers: [{ risk_universe_id: SIM_SM_MANAGER_ID, risk_universe_name: 'SIM', sm: SIM_SM_MANAGER_ID, pm: null }],
  }
}
