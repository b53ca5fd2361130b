/**
 * The simulator's state in the base wire shapes of @wh/exchange (its protocol/types.ts) (Derive field names, decimal
 * strings); v3/views.ts builds v3's answers on them.
 */

import type { Collateral, Instrument, Order, Position, Subaccount, Ticker, Trade } from '@wh/exchange'
import { E18, fromE18, mulE18 } from '@wh/exchange'
import { COLLATERALS } from './assets'
import type { SimEngine } from './engine'
import { marginView } from './margin'
import type { SimInstrument, SimOrder, SimSubaccount, SimTrade } from './sim-types'

const f = fromE18

export function instrumentView(engine: SimEngine, i: SimInstrument): Instrument {
  const now = engine.now()
  const o = i.option
  return {
    instrument_name: i.name,
    instrument_type: i.type,
    is_active: !o || o.expirySec * 1000 > now,
    base_currency: i.currency,
    quote_currency: 'USDC',
    base_asset_address: i.assetAddress,
    base_asset_sub_id: i.subId.toString(),
    tick_size: f(i.tickE18),
    amount_step: f(i.amountStepE18),
    minimum_amount: f(i.minAmountE18),
    maximum_amount: f(i.maxAmountE18),
    maker_fee_rate: f(i.makerFeeRateE18),
    taker_fee_rate: f(i.takerFeeRateE18),
    base_fee: f(i.baseFeeE18),
    mark_price_fee_rate_cap: i.feeCapRateE18 === null ? null : f(i.feeCapRateE18),
    scheduled_activation: 0,
    scheduled_deactivation: o ? o.expirySec : 9_223_372_036,
    option_details: o
      ? {
          expiry: o.expirySec,
          index: `${i.currency}-USD`,
          option_type: o.type,
          strike: f(o.strikeE18),
          settlement_price: o.settlementPriceE18 === null ? null : f(o.settlementPriceE18),
        }
      : null,
    perp_details:
      i.type === 'perp'
        ? {
            index: `${i.currency}-USD`,
            funding_rate: f(engine.fundingRatePerHourE18),
            aggregate_funding: '0',
            max_rate_per_hour: '0.004',
            min_rate_per_hour: '-0.004',
            static_interest_rate: '0.0000125',
          }
        : null,
    erc20_details:
      i.type === 'erc20'
        ? {
            decimals: COLLATERALS[i.currency].decimals,
            underlying_erc20_address: COLLATERALS[i.currency].underlyingErc20,
            borrow_index: '1',
            supply_index: '1',
          }
        : null,
  }
}

export function tickerView(engine: SimEngine, i: SimInstrument): Ticker {
  const now = engine.now()
  const q = engine.market.quote(i, now)
  const g = q.greeks
  const idx = engine.market.indexE18(i.currency)
  return {
    ...instrumentView(engine, i),
    timestamp: now,
    index_price: f(idx),
    mark_price: f(q.markE18),
    best_bid_price: f(q.bidE18),
    best_bid_amount: q.bidE18 > 0n ? f(q.depthE18) : '0',
    best_ask_price: f(q.askE18),
    best_ask_amount: f(q.depthE18),
    min_price: f(q.bidE18 / 2n),
    max_price: f(q.askE18 * 2n),
    option_pricing: g
      ? {
          delta: g.delta.toFixed(6),
          gamma: g.gamma.toFixed(8),
          theta: g.theta.toFixed(6),
          vega: g.vega.toFixed(6),
          rho: '0',
          iv: q.iv.toFixed(4),
          bid_iv: q.iv.toFixed(4),
          ask_iv: q.iv.toFixed(4),
          mark_price: f(q.markE18),
          forward_price: f(idx),
          discount_factor: '1',
        }
      : null,
  }
}

export function orderView(o: SimOrder): Order {
  return {
    order_id: o.orderId,
    subaccount_id: o.subaccountId,
    instrument_name: o.instrument,
    direction: o.direction,
    amount: f(o.amountE18),
    filled_amount: f(o.filledE18),
    limit_price: f(o.limitPriceE18),
    average_price: o.filledE18 === 0n ? '0' : f((o.notionalFilledE18 * E18) / o.filledE18),
    max_fee: f(o.maxFeeE18),
    order_fee: f(o.feeE18),
    order_status: o.status,
    order_type: 'limit',
    time_in_force: o.timeInForce,
    cancel_reason: o.cancelReason,
    creation_timestamp: o.createdMs,
    last_update_timestamp: o.updatedMs,
    label: o.label,
    mmp: o.mmp,
    is_transfer: false,
    nonce: Number(o.nonce),
    signer: o.signer,
    signature: o.signature,
    signature_expiry_sec: o.expirySec,
  }
}

export function tradeView(t: SimTrade): Trade {
  return {
    trade_id: t.tradeId,
    order_id: t.orderId,
    subaccount_id: t.subaccountId,
    instrument_name: t.instrument,
    direction: t.direction,
    trade_amount: f(t.amountE18),
    trade_price: f(t.priceE18),
    trade_fee: f(t.feeE18),
    liquidity_role: t.role,
    index_price: f(t.indexE18),
    mark_price: f(t.markE18),
    realized_pnl: '0',
    timestamp: t.timestampMs,
    transaction_id: t.transactionId,
    tx_status: 'settled',
    tx_hash: null,
    label: t.label,
    is_transfer: false,
  }
}

export function subaccountView(engine: SimEngine, sub: SimSubaccount): Subaccount {
  const now = engine.now()
  const collaterals: Collateral[] = []
  for (const [name, amt] of sub.balances) {
    const mark = name === 'USDC' ? E18 : engine.market.indexE18(name)
    collaterals.push({
      asset_name: name,
      asset_type: 'erc20',
      currency: name,
      amount: f(amt),
      mark_price: f(mark),
      mark_value: f(mulE18(amt, mark)),
      cumulative_interest: name === 'USDC' ? f(sub.cumulativeInterestE18) : '0',
      pending_interest: '0',
      initial_margin: '0',
      maintenance_margin: '0',
    })
  }
  const positions: Position[] = []
  for (const [name, p] of sub.positions) {
    const inst = engine.catalog.get(name)
    if (!inst) continue
    const q = engine.market.quote(inst, now)
    const delta = q.greeks ? q.greeks.delta : 1
    positions.push({
      instrument_name: name,
      instrument_type: inst.type === 'erc20' ? 'erc20' : inst.type,
      amount: f(p.amountE18),
      average_price: f(p.averagePriceE18),
      mark_price: f(q.markE18),
      mark_value: f(mulE18(p.amountE18, q.markE18)),
      index_price: f(engine.market.indexE18(inst.currency)),
      delta: delta.toFixed(6),
      cumulative_funding: f(p.cumulativeFundingE18),
      pending_funding: '0',
      realized_pnl: f(p.realizedPnlE18),
      unrealized_pnl: f(mulE18(p.amountE18, q.markE18 - p.averagePriceE18)),
      initial_margin: '0',
      maintenance_margin: '0',
      creation_timestamp: p.createdMs,
    })
  }
  const m = marginView(engine, sub)
  const openOrders = [...engine.orders.values()].filter((o) => o.subaccountId === sub.id && o.status === 'open')
  return {
    subaccount_id: sub.id,
    label: sub.label,
    currency: 'USDC',
    margin_type: sub.marginType,
    is_under_liquidation: false,
    collaterals,
    collaterals_value: f(m.collateralsValueE18),
    positions,
    positions_value: f(m.positionsValueE18),
    open_orders: openOrders.map(orderView),
    subaccount_value: f(m.valueE18),
    initial_margin: f(m.initialMarginE18),
    maintenance_margin: f((m.initialMarginE18 * 7n) / 10n),
  }
}
