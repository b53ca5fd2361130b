/**
 * v3 request params the simulator checks, as TypeBox schemas mirroring the spec's required fields
 * (@wh/exchange V3Wire). Nonces arrive as decimal strings, JSON numbers, or, past 2^53, as bigints
 * (the v3 layer parses integer literals exactly); docs/exchange-v3.md "Nonces, expiries and number formats".
 */
import Type, { type Static } from 'typebox'

const Decimal = Type.String({ pattern: '^-?\\d+(\\.\\d+)?$' })
const Address = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' })
/** 65 bytes r‖s‖v, with or without 0x (derive-ts sends it prefixed, derive-py bare). */
const Signature = Type.String({ pattern: '^(0x)?[0-9a-fA-F]{130}$' })
const Int = Type.Union([Type.Integer({ minimum: 0 }), Type.BigInt({ minimum: 0n })])
const Nonce = Type.Union([Type.String({ pattern: '^\\d+$' }), Int])

const Signed = {
  nonce: Nonce,
  signer: Address,
  signature: Signature,
  signature_expiry_sec: Int,
}

export const V3OrderParams = Type.Object({
  subaccount_id: Type.Integer({ minimum: 0 }),
  instrument_name: Type.String(),
  direction: Type.Union([Type.Literal('buy'), Type.Literal('sell')]),
  amount: Decimal,
  limit_price: Decimal,
  max_fee: Decimal,
  order_type: Type.Optional(Type.Union([Type.Literal('limit'), Type.Literal('market')])),
  time_in_force: Type.Optional(
    Type.Union([Type.Literal('gtc'), Type.Literal('post_only'), Type.Literal('fok'), Type.Literal('ioc')]),
  ),
  label: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  mmp: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  reduce_only: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  ...Signed,
})
export type V3OrderParams = Static<typeof V3OrderParams>

export const V3TransferSpotParams = Type.Object({
  subaccount_id: Type.Integer({ minimum: 0 }),
  to_subaccount_id: Type.Integer({ minimum: 0 }),
  new_subaccount_manager: Type.Integer({ minimum: 0 }),
  asset_name: Type.String(),
  sub_id: Int,
  amount: Decimal,
  max_fee_usd: Decimal,
  ...Signed,
})
export type V3TransferSpotParams = Static<typeof V3TransferSpotParams>

export const V3CancelParams = Type.Object({
  subaccount_id: Type.Integer({ minimum: 0 }),
  instrument_name: Type.String(),
  order_id: Type.String(),
})
export type V3CancelParams = Static<typeof V3CancelParams>

export const V3SubaccountParams = Type.Object({ subaccount_id: Type.Integer({ minimum: 0 }) })
export const V3WalletParams = Type.Object({ wallet: Address })
export const V3InstrumentParams = Type.Object({ instrument_name: Type.String() })

export const V3AllInstrumentsParams = Type.Object({
  instrument_type: Type.Union([Type.Literal('option'), Type.Literal('perp'), Type.Literal('erc20')]),
  expired: Type.Boolean(),
  currency: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  page: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
  page_size: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 1000 }), Type.Null()])),
})
export type V3AllInstrumentsParams = Static<typeof V3AllInstrumentsParams>

const OptInt = Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]))
export const V3TradeHistoryParams = Type.Object({
  subaccount_id: OptInt,
  wallet: Type.Optional(Type.Union([Address, Type.Null()])),
  instrument_name: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  order_id: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  from_timestamp: OptInt,
  to_timestamp: OptInt,
  page: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
  page_size: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 1000 }), Type.Null()])),
})
export type V3TradeHistoryParams = Static<typeof V3TradeHistoryParams>

export const V3WithdrawParams = Type.Object({
  subaccount_id: Type.Integer({ minimum: 0 }),
  asset_name: Type.String(),
  amount_in_underlying: Decimal,
  max_fee_usd: Decimal,
  force_batch: Type.Boolean(),
  recipient: Type.Optional(Type.Union([Address, Type.Null()])),
  ...Signed,
})
export type V3WithdrawParams = Static<typeof V3WithdrawParams>

/** The window of the v3 histories: one subaccount, or (taking precedence) the whole wallet. */
export const V3HistoryParams = Type.Object({
  subaccount_id: OptInt,
  wallet: Type.Optional(Type.Union([Address, Type.Null()])),
  start_timestamp: OptInt,
  end_timestamp: OptInt,
})
export type V3HistoryParams = Static<typeof V3HistoryParams>

export const V3FundingHistoryParams = Type.Object({
  ...V3HistoryParams.properties,
  instrument_name: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  page: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
  page_size: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 1000 }), Type.Null()])),
})
export type V3FundingHistoryParams = Static<typeof V3FundingHistoryParams>

export const V3TransactionParams = Type.Object({ op_uuid: Type.String() })

const OptStrings = Type.Optional(Type.Union([Type.Array(Type.String()), Type.Null()]))

/** private/set_session_key (spec SetSessionKeyRequest). */
export const V3SetSessionKeyParams = Type.Object({
  wallet: Address,
  public_session_key: Address,
  expiry_sec: Type.Integer({ minimum: 0 }),
  protocol_scopes: Type.Array(Type.String()),
  offchain_scopes: Type.Array(Type.String()),
  subaccount_ids: Type.Optional(Type.Union([Type.Array(Type.Integer({ minimum: 0 })), Type.Null()])),
  label: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  ip_whitelist: OptStrings,
  ...Signed,
})
export type V3SetSessionKeyParams = Static<typeof V3SetSessionKeyParams>

/** private/edit_session_key (spec EditSessionKeyRequest): a patch of the key's off-chain attributes. */
export const V3EditSessionKeyParams = Type.Object({
  wallet: Address,
  public_session_key: Address,
  label: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  ip_whitelist: OptStrings,
  offchain_scopes: OptStrings,
})
export type V3EditSessionKeyParams = Static<typeof V3EditSessionKeyParams>

/** private/update_whitelisted_recipients (spec UpdateWhitelistedRecipientsRequest). */
export const V3WhitelistParams = Type.Object({
  wallet: Address,
  add: Type.Array(Address),
  remove: Type.Array(Address),
  ...Signed,
})
export type V3WhitelistParams = Static<typeof V3WhitelistParams>

/** private/get_order_history: one subaccount or the whole wallet, a window, pages. */
export const V3OrderHistoryParams = Type.Object({
  subaccount_id: OptInt,
  wallet: Type.Optional(Type.Union([Address, Type.Null()])),
  from_timestamp: OptInt,
  to_timestamp: OptInt,
  page: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
  page_size: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 1000 }), Type.Null()])),
})
export type V3OrderHistoryParams = Static<typeof V3OrderHistoryParams>

/** public/get_tickers: options need a currency and an 8-digit expiry date; perps and spot may name a currency. */
export const V3TickersParams = Type.Object({
  instrument_type: Type.Union([Type.Literal('option'), Type.Literal('perp'), Type.Literal('erc20')]),
  currency: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  expiry_date: Type.Optional(Type.Union([Type.Integer(), Type.String({ pattern: '^\\d{8}$' }), Type.Null()])),
})
export type V3TickersParams = Static<typeof V3TickersParams>
