/**
 * The result shapes the service reads. They carry the field names of Derive's v2 API, which the
 * service was built on and which Derive retired; the client translates each v3 answer into them
 * (../v3/adapt.ts, ../v3/adapt-history.ts), so comments there speak of "v2's" shapes. Amounts and
 * prices are decimal strings; timestamps are milliseconds unless the name says `_sec`.
 */
export type InstrumentType = 'erc20' | 'option' | 'perp'
export type Direction = 'buy' | 'sell'
export type OrderStatus = 'open' | 'filled' | 'cancelled' | 'expired'
export type TxStatus = 'requested' | 'pending' | 'settled' | 'reverted' | 'ignored' | 'timed_out'

export interface OptionDetails {
  expiry: number
  index: string
  option_type: 'C' | 'P'
  strike: string
  settlement_price: string | null
}

export interface PerpDetails {
  index: string
  funding_rate: string
  aggregate_funding: string
  max_rate_per_hour: string
  min_rate_per_hour: string
  static_interest_rate: string
}

export interface Erc20Details {
  decimals: number
  underlying_erc20_address: string
  borrow_index: string
  supply_index: string
}

export interface Instrument {
  instrument_name: string
  instrument_type: InstrumentType
  is_active: boolean
  base_currency: string
  quote_currency: string
  base_asset_address: string
  base_asset_sub_id: string
  tick_size: string
  amount_step: string
  minimum_amount: string
  maximum_amount: string
  maker_fee_rate: string
  taker_fee_rate: string
  base_fee: string
  mark_price_fee_rate_cap: string | null
  scheduled_activation: number
  scheduled_deactivation: number
  option_details: OptionDetails | null
  perp_details: PerpDetails | null
  erc20_details: Erc20Details | null
}

export interface OptionPricing {
  delta: string
  gamma: string
  theta: string
  vega: string
  rho: string
  iv: string
  bid_iv: string
  ask_iv: string
  mark_price: string
  forward_price: string
  discount_factor: string
}

export interface Ticker extends Instrument {
  timestamp: number
  index_price: string
  mark_price: string
  best_bid_price: string
  best_bid_amount: string
  best_ask_price: string
  best_ask_amount: string
  min_price: string
  max_price: string
  option_pricing: OptionPricing | null
}

export interface Currency {
  currency: string
  spot_price: string
  instrument_types: InstrumentType[]
  protocol_asset_addresses: {
    spot: string | null
    perp: string | null
    option: string | null
    underlying_erc20: string | null
  }
  erc20_details: { decimals: number; underlying_erc20_address: string } | null
  managers: { address: string; margin_type: 'SM' | 'PM' | 'PM2'; currency: string | null }[]
  supply_apy: string
  borrow_apy: string
}

export interface Order {
  order_id: string
  subaccount_id: number
  instrument_name: string
  direction: Direction
  amount: string
  filled_amount: string
  limit_price: string
  average_price: string
  max_fee: string
  order_fee: string
  order_status: OrderStatus
  order_type: 'limit' | 'market'
  time_in_force: 'gtc' | 'post_only' | 'fok' | 'ioc'
  cancel_reason: string
  creation_timestamp: number
  last_update_timestamp: number
  label: string
  mmp: boolean
  is_transfer: boolean
  nonce: number
  signer: string
  signature: string
  signature_expiry_sec: number
}

export interface Trade {
  trade_id: string
  order_id: string
  subaccount_id: number
  instrument_name: string
  direction: Direction
  trade_amount: string
  trade_price: string
  trade_fee: string
  liquidity_role: 'maker' | 'taker'
  index_price: string
  mark_price: string
  realized_pnl: string
  timestamp: number
  transaction_id: string
  tx_status: TxStatus
  tx_hash: string | null
  label: string
  is_transfer: boolean
}

export interface Collateral {
  asset_name: string
  asset_type: InstrumentType
  currency: string
  amount: string
  mark_price: string
  mark_value: string
  cumulative_interest: string
  pending_interest: string
  initial_margin: string
  maintenance_margin: string
}

export interface Position {
  instrument_name: string
  instrument_type: InstrumentType
  amount: string
  average_price: string
  mark_price: string
  mark_value: string
  index_price: string
  delta: string
  cumulative_funding: string
  pending_funding: string
  realized_pnl: string
  unrealized_pnl: string
  initial_margin: string
  maintenance_margin: string
  creation_timestamp: number
}

export interface Subaccount {
  subaccount_id: number
  label: string
  currency: string
  margin_type: 'SM' | 'PM' | 'PM2'
  is_under_liquidation: boolean
  collaterals: Collateral[]
  collaterals_value: string
  positions: Position[]
  positions_value: string
  open_orders: Order[]
  subaccount_value: string
  initial_margin: string
  maintenance_margin: string
}

export interface TxResult {
  status: TxStatus
  transaction_id: string
}

export interface DepositEvent {
  amount: string
  asset: string
  timestamp: number
  transaction_id: string
  tx_hash: string
  tx_status: TxStatus
}

export interface WithdrawalEvent {
  amount: string
  asset: string
  timestamp: number
  tx_hash: string
  tx_status: TxStatus
}

export interface Erc20TransferEvent {
  amount: string
  asset: string
  counterparty_subaccount_id: number
  is_outgoing: boolean
  timestamp: number
  tx_hash: string
}

export interface InterestEvent {
  interest: string
  timestamp: number
}

export interface FundingEvent {
  funding: string
  instrument_name: string
  pnl: string
  timestamp: number
}

export interface OptionSettlement {
  subaccount_id: number
  instrument_name: string
  expiry: number
  amount: string
  settlement_price: string
  option_settlement_pnl: string
  option_settlement_pnl_excl_fees: string
}

export interface Pagination {
  count: number
  num_pages: number
}

export interface OrderDebugResult {
  encoded_data: string
  encoded_data_hashed: string
  action_hash: string
  typed_data_hash: string
  raw_data: Record<string, unknown>
}
