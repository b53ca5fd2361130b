/**
 * Params of the signed (state-changing) methods, as TypeBox schemas: the simulator validates
 * requests against them and the client derives its parameter types from them, so both sides
 * agree on field names and units (decimal strings for amounts and prices).
 */
import Type, { type Static } from 'typebox'

export const DecimalString = Type.String({ pattern: '^-?\\d+(\\.\\d+)?$' })
const Address = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' })
const HexSig = Type.String({ pattern: '^0x[0-9a-fA-F]+$' })
/** ms timestamp * 1000 + random digits: below 2^53, so JSON numbers carry it exactly; strings accepted too. */
const Nonce = Type.Union([Type.Integer({ minimum: 0 }), Type.String({ pattern: '^\\d+$' })])
const SubaccountId = Type.Integer({ minimum: 0 })

export const SignedFields = {
  nonce: Nonce,
  signature: HexSig,
  signature_expiry_sec: Type.Integer({ minimum: 0 }),
  signer: Address,
}

export const DepositParams = Type.Object({
  subaccount_id: SubaccountId,
  asset_name: Type.String(),
  amount: DecimalString,
  is_atomic_signing: Type.Optional(Type.Boolean()),
  ...SignedFields,
})
export type DepositParams = Static<typeof DepositParams>

export const WithdrawParams = DepositParams
export type WithdrawParams = Static<typeof WithdrawParams>

export const CreateSubaccountParams = Type.Object({
  wallet: Address,
  asset_name: Type.String(),
  amount: DecimalString,
  margin_type: Type.Union([Type.Literal('SM'), Type.Literal('PM'), Type.Literal('PM2')]),
  currency: Type.Optional(Type.String()),
  ...SignedFields,
})
export type CreateSubaccountParams = Static<typeof CreateSubaccountParams>

const SignatureDetails = Type.Object(SignedFields)
export const TransferErc20Params = Type.Object({
  subaccount_id: SubaccountId,
  recipient_subaccount_id: SubaccountId,
  sender_details: SignatureDetails,
  recipient_details: SignatureDetails,
  transfer: Type.Object({ address: Address, amount: DecimalString, sub_id: Type.Integer({ minimum: 0 }) }),
})
export type TransferErc20Params = Static<typeof TransferErc20Params>

export const Direction = Type.Union([Type.Literal('buy'), Type.Literal('sell')])
export const TimeInForce = Type.Union([
  Type.Literal('gtc'),
  Type.Literal('post_only'),
  Type.Literal('fok'),
  Type.Literal('ioc'),
])
export type TimeInForce = Static<typeof TimeInForce>

export const OrderParams = Type.Object({
  subaccount_id: SubaccountId,
  instrument_name: Type.String(),
  direction: Direction,
  amount: DecimalString,
  limit_price: DecimalString,
  max_fee: DecimalString,
  order_type: Type.Optional(Type.Union([Type.Literal('limit'), Type.Literal('market')])),
  time_in_force: Type.Optional(TimeInForce),
  label: Type.Optional(Type.String()),
  mmp: Type.Optional(Type.Boolean()),
  reduce_only: Type.Optional(Type.Boolean()),
  reject_timestamp: Type.Optional(Type.Integer()),
  ...SignedFields,
})
export type OrderParams = Static<typeof OrderParams>

export const CancelParams = Type.Object({
  subaccount_id: SubaccountId,
  instrument_name: Type.String(),
  order_id: Type.String(),
})
export type CancelParams = Static<typeof CancelParams>

export const LoginParams = Type.Object({
  wallet: Address,
  timestamp: Type.Union([Type.String({ pattern: '^\\d+$' }), Type.Integer()]),
  signature: HexSig,
})
