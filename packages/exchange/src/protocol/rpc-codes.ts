/**
 * Derive's JSON-RPC error codes we produce or react to. Source: Derive's catalog as derive-py
 * lists it (derivexyz/derive-py@92fa887 `derive_py/data_types/enums.py` DeriveJSONRPCErrorCode,
 * which cites docs.derive.xyz/reference/error-codes; its v3 tests meet 10004, 11103 and 11107
 * as listed), the catalog page's rows for codes derive-py leaves out (11023), and derive-ts
 * 3.0.13 for the v3 codes neither lists (11033, 14039). docs/exchange.md "Error codes" has the
 * table with each code's source. Negative codes are JSON-RPC/transport level, positive ones
 * application errors.
 */
export const RPC = {
  RATE_LIMITED: -32000,
  CONCURRENT_WS_CLIENTS_LIMIT: -32100,
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL: -32603,
  ORDER_CONFIRMATION_TIMEOUT: 9000,
  ENGINE_CONFIRMATION_TIMEOUT: 9001,
  SUBACCOUNT_MISMATCH: 10003,
  MAX_SESSION_KEYS_REACHED: 10006,
  INSUFFICIENT_FUNDS: 11000,
  ORDER_DOES_NOT_EXIST: 11006,
  POST_ONLY_REJECT: 11008,
  ZERO_LIQUIDITY: 11009,
  INVALID_SIGNATURE_EXPIRY: 11011,
  INVALID_AMOUNT: 11012,
  INVALID_LIMIT_PRICE: 11013,
  FOK_NOT_FILLED: 11014,
  NONCE_NOT_UNIQUE: 11017,
  INVALID_NONCE_DATE: 11018,
  INSTRUMENT_NOT_LIVE: 11021,
  MAX_FEE_TOO_LOW: 11023,
  RECIPIENT_NOT_WHITELISTED: 11033,
  ASSET_NOT_FOUND: 12000,
  INSTRUMENT_NOT_FOUND: 12001,
  CURRENCY_NOT_FOUND: 12002,
  INVALID_CHANNELS: 13000,
  ACCOUNT_NOT_FOUND: 14000,
  SUBACCOUNT_NOT_FOUND: 14001,
  SESSION_KEY_REGISTERED_OTHER_ACCOUNT: 14011,
  SIGNATURE_INVALID: 14014,
  HEADER_WALLET_MISMATCH: 14020,
  HEADER_WALLET_MISSING: 14021,
  PRIVATE_CHANNEL_SUBSCRIPTION_FAILED: 14022,
  SIGNER_NOT_OWNER: 14023,
  SESSION_KEY_NOT_FOUND: 14026,
  SESSION_KEY_EXPIRED: 14030,
  UNAUTHORIZED_KEY_SCOPE: 14031,
  SESSION_KEY_EXPIRY_TOO_SHORT: 14039,
} as const

export interface RpcErrorBody {
  code: number
  message: string
  data?: string | null
}
