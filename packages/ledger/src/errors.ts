/** The ledger's typed failures; the API maps AppError to Fastify's error shape in one plugin. */
import { AppError, BusinessRuleError } from '@wh/core'

/** A payload that fails its schema or its rule's own checks: a bug in the caller, not user input. */
export class InvalidEventError extends AppError {
  constructor(type: string, message: string, details: Record<string, unknown> = {}) {
    super({
      code: 'INVALID_LEDGER_EVENT',
      statusCode: 500,
      message: `${type}: ${message}`,
      details: { type, ...details },
    })
  }
}

/** A posting set that does not sum to zero in some currency (TIGER_STYLE: assert at the boundary). */
export class UnbalancedPostingsError extends AppError {
  constructor(type: string, currency: string, sum: bigint) {
    super({
      code: 'UNBALANCED_POSTINGS',
      statusCode: 500,
      message: `${type}: postings do not sum to zero in ${currency}`,
      details: { type, currency, sum: sum.toString() },
    })
  }
}

/**
 * An authorizing event or a withdrawal request would take the free balance below zero
 * (spec 7: a business rule, 422 with its own code). Nothing was written.
 */
export class InsufficientFreeBalanceError extends BusinessRuleError {
  constructor(details: { userId: string; currency: string; freeBalance?: bigint; amount?: bigint }) {
    super('INSUFFICIENT_FREE_BALANCE', `free balance in ${details.currency} is insufficient`, {
      userId: details.userId,
      currency: details.currency,
      ...(details.freeBalance === undefined ? {} : { freeBalance: details.freeBalance.toString() }),
      ...(details.amount === undefined ? {} : { amount: details.amount.toString() }),
    })
  }
}

/** More events in one batch than MAX_BATCH_EVENTS. */
export class BatchTooLargeError extends AppError {
  constructor(size: number, max: number) {
    super({ code: 'LEDGER_BATCH_TOO_LARGE', statusCode: 500, message: `batch of ${size} events exceeds ${max}` })
  }
}
