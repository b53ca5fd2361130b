/**
 * A withdrawal request's failures (requestWithdrawal, request.ts), each with a stable code and the
 * API's status (spec 7: 400 input, 422 rules, 503 a dependency to retry).
 */
import { AppError, BusinessRuleError } from '@wh/core'

export class InvalidDestinationError extends AppError {
  constructor(message: string) {
    super({ code: 'INVALID_DESTINATION', statusCode: 400, message })
  }
}
export class UnknownRouteError extends AppError {
  constructor(chain: string, asset: string) {
    super({ code: 'UNKNOWN_ROUTE', statusCode: 400, message: `no withdrawal route for ${asset} on ${chain}` })
  }
}
/** spec 8.2: below WITHDRAWAL_MIN_USD. */
export class WithdrawalBelowMinimumError extends BusinessRuleError {
  constructor(minAmount: string, asset: string, minUsd: string) {
    super('WITHDRAWAL_BELOW_MINIMUM', `amount is below the minimum of ${minAmount} ${asset} (${minUsd} USD)`, {
      minAmount,
      asset,
      minUsd,
    })
  }
}
/** spec 8.2: above WITHDRAWAL_MAX_USD. */
export class WithdrawalAboveMaximumError extends BusinessRuleError {
  constructor(maxAmount: string, asset: string, maxUsd: string) {
    super('WITHDRAWAL_ABOVE_MAXIMUM', `amount is above the maximum of ${maxAmount} ${asset} (${maxUsd} USD)`, {
      maxAmount,
      asset,
      maxUsd,
    })
  }
}
/** The Idempotency-Key was used before for a different request. */
export class IdempotencyKeyReusedError extends BusinessRuleError {
  constructor() {
    super('IDEMPOTENCY_KEY_REUSED', 'this Idempotency-Key was used for a different withdrawal request')
  }
}
/** A JSON number where a decimal string is required (a float cannot carry an amount exactly). */
export class AmountNotStringError extends AppError {
  constructor() {
    super({ code: 'VALIDATION_ERROR', statusCode: 400, message: 'body/amount must be a decimal string' })
  }
}
/** ETH to an address holding code whose dry run reverts (docs/hostile-world.md "Destinations"). */
export class DestinationRefusesEthError extends BusinessRuleError {
  constructor(chain: string) {
    super(
      'DESTINATION_REFUSES_ETH',
      `the destination is a contract that refuses this ETH payment on ${chain} (a dry run of it reverts)`,
      { chain },
    )
  }
}
/** The ETH price is missing or older than its maximum age: the bounds in USD cannot be converted. */
export class PriceUnavailableError extends AppError {
  constructor(asset: string) {
    super({
      code: 'PRICE_UNAVAILABLE',
      statusCode: 503,
      retryable: true,
      message: `no recent ${asset} price to convert the withdrawal bounds; try again shortly`,
    })
  }
}
/** More withdrawals requested and not yet sent than one user may have (docs/hostile-world.md). */
export class TooManyOpenWithdrawalsError extends BusinessRuleError {
  constructor(max: number) {
    super(
      'TOO_MANY_OPEN_WITHDRAWALS',
      `at most ${max} withdrawals may wait to be sent at once; wait for one to be sent`,
      {
        max,
      },
    )
  }
}
/**
 * ETH to an address holding code that needs more gas to receive it than a withdrawal to a contract
 * may spend (docs/hostile-world.md "Destinations"): refused before anything is reserved.
 */
export class DestinationGasAboveBudgetError extends BusinessRuleError {
  constructor(chain: string, budgetGas: bigint) {
    super(
      'DESTINATION_GAS_ABOVE_BUDGET',
      `the destination needs more than ${budgetGas} gas to receive this payment on ${chain}, the most a withdrawal to a contract may spend`,
      { chain, budgetGas },
    )
  }
}
/**
 * Two of the caller's withdrawals failed on chain in the window: withdrawals to addresses holding
 * code are refused until `until` (docs/hostile-world.md "The user's failures are the user's").
 */
export class ContractDestinationsCoolingError extends BusinessRuleError {
  constructor(failures: number, until: Date) {
    super(
      'CONTRACT_DESTINATIONS_COOLING',
      `${failures} withdrawals of this account failed on chain in the last 24 hours: withdrawals to contract addresses are refused until ${until.toISOString()}`,
      { failures, until: until.toISOString() },
    )
  }
}
/** More withdrawal requests in a minute than one user may make (WITHDRAWAL_REQUESTS_PER_MINUTE). */
export class TooManyWithdrawalRequestsError extends AppError {
  constructor(perMinute: number) {
    super({
      code: 'TOO_MANY_WITHDRAWAL_REQUESTS',
      statusCode: 429,
      message: `at most ${perMinute} withdrawal requests per minute; try again shortly`,
      details: { perMinute },
    })
  }
}
