/**
 * v3 answers (src/v3/wire.gen.ts) in the shapes the service reads (protocol/types.ts), so the
 * worker runs unchanged on either protocol. What v3 does not carry is derived, never invented
 * silently: the ticker's instrument fields come from `public/get_instrument`, a trade's settlement
 * from its batch status (docs/exchange-v3.md "What the client does on v3").
 */
import type * as T from '../protocol/types'
import type * as W from './wire.gen'

const INSTRUMENT_TYPES = new Set<string>(['erc20', 'option', 'perp'])
const asInstrumentType = (s: string): T.InstrumentType => (INSTRUMENT_TYPES.has(s) ? (s as T.InstrumentType) : 'erc20')

export function instrumentFromV3(i: W.Instrument): T.Instrument {
  return {
    instrument_name: i.instrument_name,
    instrument_type: i.instrument_type,
    is_active: i.is_active,
    base_currency: i.base_currency,
    quote_currency: i.quote_currency,
    base_asset_address: i.base_asset_address,
    base_asset_sub_id: i.base_asset_sub_id,
    tick_size: i.tick_size,
    amount_step: i.amount_step,
    minimum_amount: i.minimum_amount,
    maximum_amount: i.maximum_amount,
    maker_fee_rate: i.maker_fee_rate,
    taker_fee_rate: i.taker_fee_rate,
    base_fee: i.base_fee,
    mark_price_fee_rate_cap: i.mark_price_fee_rate_cap ?? null,
    scheduled_activation: i.scheduled_activation,
    scheduled_deactivation: i.scheduled_deactivation,
    option_details: i.option_details
      ? {
          expiry: i.option_details.expiry,
          index: i.option_details.index,
          option_type: i.option_details.option_type === 'C' ? 'C' : 'P',
          strike: i.option_details.strike,
          settlement_price: i.option_details.settlement_price ?? null,
        }
      : null,
    // v3 dropped the static interest rate from perp details: none is charged on v3
    perp_details: i.perp_details ? { ...i.perp_details, static_interest_rate: '0' } : null,
    erc20_details: i.erc20_details ?? null,
  }
}

/** The slim snapshot spread over its instrument (v2's ticker carried the instrument's fields itself). */
export function tickerFromV3(inst: T.Instrument, t: W.TickerSlimSnapshot): T.Ticker {
  const g = t.option_pricing
  return {
    ...inst,
    timestamp: t.t,
    index_price: t.I,
    mark_price: t.M,
    best_bid_price: t.b,
    best_bid_amount: t.B,
    best_ask_price: t.a,
    best_ask_amount: t.A,
    min_price: t.minp,
    max_price: t.maxp,
    option_pricing: g
      ? {
          delta: g.d,
          gamma: g.g,
          theta: g.t,
          vega: g.v,
          rho: g.r,
          iv: g.i,
          bid_iv: g.bi,
          ask_iv: g.ai,
          mark_price: g.m,
          forward_price: g.f,
          discount_factor: g.df,
        }
      : null,
  }
}

export function currencyFromV3(c: W.Currency): T.Currency {
  const spot = c.spot[0]
  const lending = spot?.universes.find((u) => u.lending)?.lending
  return {
    currency: c.currency,
    spot_price: c.spot_price,
    instrument_types: [
      ...(spot ? ['erc20' as const] : []),
      ...(c.option ? ['option' as const] : []),
      ...(c.perp ? ['perp' as const] : []),
    ],
    protocol_asset_addresses: {
      spot: spot?.address ?? null,
      perp: c.perp?.address ?? null,
      option: c.option?.address ?? null,
      underlying_erc20: spot?.erc20.underlying_erc20 ?? null,
    },
    erc20_details: spot
      ? { decimals: spot.erc20.decimals, underlying_erc20_address: spot.erc20.underlying_erc20 ?? '' }
      : null,
    // v3 names risk managers by id (`risk_universe_id`, `sm`/`pm`), not by contract address
    managers: [],
    supply_apy: lending?.supply_apy ?? '0',
    borrow_apy: lending?.borrow_apy ?? '0',
  }
}

const V2_STATUS: Record<W.OrderStatus, T.OrderStatus> = {
  open: 'open',
  untriggered: 'open',
  algo_active: 'open',
  filled: 'filled',
  cancelled: 'cancelled',
  rejected: 'cancelled',
  expired: 'expired',
}

export function orderFromV3(o: W.Order): T.Order {
  return {
    order_id: o.order_id,
    subaccount_id: o.subaccount_id,
    instrument_name: o.instrument_name,
    direction: o.direction,
    amount: o.amount,
    filled_amount: o.filled_amount,
    limit_price: o.limit_price,
    average_price: o.average_price,
    max_fee: o.max_fee,
    order_fee: o.order_fee,
    order_status: V2_STATUS[o.order_status],
    order_type: o.order_type,
    time_in_force: o.time_in_force,
    cancel_reason: o.cancel_reason ?? '',
    creation_timestamp: o.creation_timestamp,
    last_update_timestamp: o.last_update_timestamp,
    label: o.label ?? '',
    mmp: o.mmp,
    is_transfer: o.is_transfer,
    // a nanosecond nonce exceeds 2^53: the v2 shape's number holds it only approximately; nothing reads it back
    nonce: Number(o.nonce),
    signer: o.signer,
    signature: o.signature,
    signature_expiry_sec: o.signature_expiry_sec,
  }
}

/** Settled batches are final; an `*Error` stage failed; anything else is still on its way. */
export function txStatusOfBatch(b: W.BatchStatus | null | undefined): T.TxStatus {
  if (b === 'Settled') return 'settled'
  if (b?.endsWith('Error')) return 'reverted'
  return 'pending'
}

export function tradeFromV3(t: W.Trade | W.TradeHistoryResponse): T.Trade {
  return {
    trade_id: t.trade_id,
    order_id: t.order_id,
    subaccount_id: t.subaccount_id,
    instrument_name: t.instrument_name,
    direction: t.direction,
    trade_amount: t.trade_amount,
    trade_price: t.trade_price,
    trade_fee: t.trade_fee,
    liquidity_role: t.liquidity_role,
    index_price: t.index_price,
    mark_price: t.mark_price,
    realized_pnl: t.realized_pnl,
    timestamp: t.timestamp,
    transaction_id: t.op_uuid,
    tx_status: txStatusOfBatch(t.batch_status),
    tx_hash: t.tx_hash ?? null,
    label: t.label ?? '',
    is_transfer: t.is_transfer,
  }
}

export function collateralFromV3(c: W.Collateral): T.Collateral {
  return {
    asset_name: c.asset_name,
    asset_type: asInstrumentType(c.asset_type),
    currency: c.currency,
    amount: c.amount,
    mark_price: c.mark_price,
    mark_value: c.mark_value,
    cumulative_interest: c.cumulative_interest,
    pending_interest: c.pending_interest,
    initial_margin: c.initial_margin,
    maintenance_margin: c.maintenance_margin,
  }
}

export function positionFromV3(p: W.Position): T.Position {
  return {
    instrument_name: p.instrument_name,
    instrument_type: p.instrument_type,
    amount: p.amount,
    average_price: p.average_price,
    mark_price: p.mark_price,
    mark_value: p.mark_value,
    index_price: p.index_price,
    delta: p.delta,
    cumulative_funding: p.cumulative_funding,
    pending_funding: p.pending_funding,
    realized_pnl: p.realized_pnl,
    unrealized_pnl: p.unrealized_pnl,
    initial_margin: p.initial_margin,
    maintenance_margin: p.maintenance_margin,
    creation_timestamp: p.creation_timestamp,
  }
}

const MARGIN_TYPES = new Set(['SM', 'PM', 'PM2'])

export function subaccountFromV3(s: W.Subaccount): T.Subaccount & { failed_to_fetch: boolean } {
  return {
    subaccount_id: s.subaccount_id,
    label: s.label,
    currency: s.currency[0] ?? 'USDC',
    margin_type: MARGIN_TYPES.has(s.margin_type) ? (s.margin_type as T.Subaccount['margin_type']) : 'SM',
    is_under_liquidation: s.is_under_liquidation,
    collaterals: s.collaterals.map(collateralFromV3),
    collaterals_value: s.collaterals_value,
    positions: s.positions.map(positionFromV3),
    positions_value: s.positions_value,
    open_orders: s.open_orders.map(orderFromV3),
    subaccount_value: s.subaccount_value,
    initial_margin: s.initial_margin,
    maintenance_margin: s.maintenance_margin,
    failed_to_fetch: s.failed_to_fetch,
  }
}
