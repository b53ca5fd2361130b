/** The failures a caller of the swap package can act on, each with a stable code (STYLE: errors as types). */
import { AppError } from '@wh/core'

/** The quote is further from the index price than SANITY_THRESHOLD_BPS: refused, nothing sent. */
export class SwapSanityError extends AppError {
  constructor(details: { swapId: string; quote: bigint; deviationBps: bigint; thresholdBps: number }) {
    super({
      code: 'SWAP_SANITY_REFUSED',
      statusCode: 422,
      message: `quote deviates ${details.deviationBps} bps from the index price (limit ${details.thresholdBps})`,
      details: { ...details, quote: details.quote.toString(), deviationBps: details.deviationBps.toString() },
    })
  }
}

/** The swap wallet holds less native gas than SWAP_GAS_FLOOR_WEI: refused, nothing sent. */
export class SwapGasFloorError extends AppError {
  constructor(details: { chain: string; wallet: string; balanceWei: bigint; floorWei: bigint }) {
    super({
      code: 'SWAP_GAS_BELOW_FLOOR',
      statusCode: 422,
      retryable: true,
      message: `swap wallet ${details.wallet} holds ${details.balanceWei} wei on ${details.chain}, below the floor of ${details.floorWei}`,
      details: { ...details, balanceWei: details.balanceWei.toString(), floorWei: details.floorWei.toString() },
    })
  }
}

/** A swap id already exists with other parameters (user, subaccount, chain, currencies, amount). */
export class SwapMismatchError extends AppError {
  constructor(swapId: string, field: string) {
    super({
      code: 'SWAP_MISMATCH',
      statusCode: 409,
      message: `swap ${swapId} already exists with another ${field}`,
      details: { swapId, field },
    })
  }
}

/** The request itself is unusable (same currency twice, zero amount, unknown chain or currency). */
export class InvalidSwapRequestError extends AppError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super({ code: 'INVALID_SWAP_REQUEST', statusCode: 400, message, details })
  }
}

/** No swap venue is configured for this deployment (the live adapter is not built yet). */
export class SwapAdapterNotConfiguredError extends AppError {
  constructor(what: string) {
    super({
      code: 'SWAP_ADAPTER_NOT_CONFIGURED',
      message: `no swap adapter is configured (${what}): only the local pool adapter exists`,
      details: { what },
    })
  }
}

/** A successful swap receipt without the Transfer logs a swap must leave: the venue is not what we think. */
export class SwapReceiptError extends AppError {
  constructor(txHash: string, message: string) {
    super({ code: 'SWAP_RECEIPT_UNEXPECTED', message: `${txHash}: ${message}`, details: { txHash } })
  }
}

/** The swap wallet holds less of the sold token than the swap sells: refused, nothing sent. */
export class SwapWalletBalanceError extends AppError {
  constructor(details: { chain: string; wallet: string; currency: string; balance: bigint; needed: bigint }) {
    super({
      code: 'SWAP_WALLET_SHORT',
      statusCode: 422,
      retryable: true,
      message: `swap wallet ${details.wallet} holds ${details.balance} ${details.currency} base units on ${details.chain}, the swap sells ${details.needed}`,
      details: { ...details, balance: details.balance.toString(), needed: details.needed.toString() },
    })
  }
}

/** The allowance transaction for the venue reverted on chain (its gas is journaled); the swap waits for a retry. */
export class SwapApprovalFailedError extends AppError {
  constructor(details: { chain: string; txHash: string; token: string; spender: string }) {
    super({
      code: 'SWAP_APPROVAL_FAILED',
      retryable: true,
      message: `the approval ${details.txHash} of ${details.spender} for ${details.token} failed on ${details.chain}`,
      details,
    })
  }
}
