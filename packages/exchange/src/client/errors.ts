/**
 * Exchange failures as typed errors with stable codes, so callers act on the kind of failure
 * (retry, fix the request, stop trading) instead of parsing messages. The Derive error code
 * and message travel in `details`.
 */
import { AppError } from '@wh/core'
import { RPC, type RpcErrorBody } from '../protocol/rpc-codes'

interface ExchangeErrorInit {
  message: string
  method: string
  rpcCode?: number | undefined
  data?: unknown
  cause?: unknown
}

/** Base of every exchange failure. */
export class ExchangeError extends AppError {
  readonly method: string
  readonly rpcCode: number | undefined
  constructor(code: string, statusCode: number, retryable: boolean, init: ExchangeErrorInit) {
    super({
      code,
      statusCode,
      retryable,
      message: init.message,
      details: { method: init.method, rpcCode: init.rpcCode, data: init.data },
      cause: init.cause,
    })
    this.method = init.method
    this.rpcCode = init.rpcCode
  }
}

/** The exchange refused our credentials: bad or stale request auth, a bad action signature, an unknown signer. */
export class ExchangeAuthError extends ExchangeError {
  constructor(init: ExchangeErrorInit) {
    super('EXCHANGE_AUTH', 502, false, init)
  }
}

/** Not enough collateral or margin for the order, withdrawal or transfer. */
export class ExchangeInsufficientMarginError extends ExchangeError {
  constructor(init: ExchangeErrorInit) {
    super('EXCHANGE_INSUFFICIENT_MARGIN', 422, false, init)
  }
}

/** The order was refused (post-only cross, unfilled fill-or-kill, bad price or amount, fee cap …). */
export class ExchangeOrderRejectedError extends ExchangeError {
  constructor(init: ExchangeErrorInit) {
    super('EXCHANGE_ORDER_REJECTED', 422, false, init)
  }
}

/** Too many requests; retry after a pause. */
export class ExchangeRateLimitedError extends ExchangeError {
  constructor(init: ExchangeErrorInit) {
    super('EXCHANGE_RATE_LIMITED', 503, true, init)
  }
}

/** The instrument, asset or currency named is not listed (12000-12002). */
export class ExchangeUnknownInstrumentError extends ExchangeError {
  constructor(init: ExchangeErrorInit) {
    super('EXCHANGE_UNKNOWN_INSTRUMENT', 422, false, init)
  }
}

/** The exchange could not be reached or failed on its side; safe to retry reads. */
export class ExchangeUnavailableError extends ExchangeError {
  constructor(init: ExchangeErrorInit) {
    super('EXCHANGE_UNAVAILABLE', 503, true, init)
  }
}

/** Any other refusal (bad params, unknown subaccount, …): a bug or a state the caller must look at. */
export class ExchangeRequestError extends ExchangeError {
  constructor(init: ExchangeErrorInit) {
    super('EXCHANGE_REQUEST_REJECTED', 422, false, init)
  }
}

const ORDER_CODES = new Set<number>([
  RPC.ORDER_DOES_NOT_EXIST,
  RPC.POST_ONLY_REJECT,
  RPC.ZERO_LIQUIDITY,
  RPC.INVALID_SIGNATURE_EXPIRY,
  RPC.INVALID_AMOUNT,
  RPC.INVALID_LIMIT_PRICE,
  RPC.FOK_NOT_FILLED,
  RPC.NONCE_NOT_UNIQUE,
  RPC.INVALID_NONCE_DATE,
  RPC.INSTRUMENT_NOT_LIVE,
  RPC.MAX_FEE_TOO_LOW,
])

/** Derive's "not found" codes for what a request names: an asset, an instrument, a currency (12000-12002). */
const UNKNOWN_NAME_CODES = new Set<number>([RPC.ASSET_NOT_FOUND, RPC.INSTRUMENT_NOT_FOUND, RPC.CURRENCY_NOT_FOUND])

/** Maps a JSON-RPC error body to its typed error (codes: docs/exchange.md "Error codes"). */
export function errorFromRpc(method: string, body: RpcErrorBody): ExchangeError {
  const init = { method, rpcCode: body.code, message: `${method}: ${body.message}`, data: body.data }
  const code = body.code
  if (code === RPC.RATE_LIMITED || code === RPC.CONCURRENT_WS_CLIENTS_LIMIT) return new ExchangeRateLimitedError(init)
  if (code === RPC.INSUFFICIENT_FUNDS || /margin|buying power|insufficient/i.test(body.message))
    return new ExchangeInsufficientMarginError(init)
  if (UNKNOWN_NAME_CODES.has(code)) return new ExchangeUnknownInstrumentError(init)
  // 14xxx: the request's auth or the signing key (unknown owner, unknown or expired key, out of
  // scope); 14001 names a subaccount the exchange does not know, which is the request's error
  if (code >= 14000 && code < 15000 && code !== RPC.SUBACCOUNT_NOT_FOUND) return new ExchangeAuthError(init)
  if (ORDER_CODES.has(code) || (code >= 11000 && code < 12000)) return new ExchangeOrderRejectedError(init)
  if (code === RPC.INTERNAL || code === RPC.ORDER_CONFIRMATION_TIMEOUT || code === RPC.ENGINE_CONFIRMATION_TIMEOUT)
    return new ExchangeUnavailableError(init)
  return new ExchangeRequestError(init)
}
