/** A refusal the simulator answers with Derive's error shape `{ code, message, data }`. */
import { RPC } from '@wh/exchange'

export class SimRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data: string | null = null,
  ) {
    super(message)
  }
}

export const rpcErr = {
  params: (data: string) => new SimRpcError(RPC.INVALID_PARAMS, 'Invalid params', data),
  signature: (data: string) =>
    new SimRpcError(RPC.SIGNATURE_INVALID, 'Signature invalid for message or transaction', data),
  funds: (data: string) => new SimRpcError(RPC.INSUFFICIENT_FUNDS, 'Insufficient funds', data),
  instrument: (name: string) => new SimRpcError(RPC.INSTRUMENT_NOT_FOUND, 'Instrument not found', name),
  asset: (name: string) => new SimRpcError(RPC.ASSET_NOT_FOUND, 'Asset not found', name),
  currency: (name: string) => new SimRpcError(RPC.CURRENCY_NOT_FOUND, 'Currency not found', name),
  subaccount: (id: number) => new SimRpcError(RPC.SUBACCOUNT_NOT_FOUND, 'Subaccount not found', String(id)),
  account: (wallet: string) => new SimRpcError(RPC.ACCOUNT_NOT_FOUND, 'Account not found', wallet),
}
