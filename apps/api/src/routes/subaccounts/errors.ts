/** The subaccounts controller's failures, each with a stable code (DESIGN: 404 missing, 409 conflict, 422 rules). */
import { AppError, BusinessRuleError } from '@wh/core'

/** The caller has no subaccount for this asset (never funded). */
export class SubaccountNotFoundError extends AppError {
  constructor(asset: string) {
    super({ code: 'SUBACCOUNT_NOT_FOUND', statusCode: 404, message: `no subaccount for ${asset}` })
  }
}

/** A release of this subaccount is still open; its id is in `details`. */
export class ReleaseAlreadyOpenError extends AppError {
  constructor(releaseId: string) {
    super({
      code: 'RELEASE_ALREADY_OPEN',
      statusCode: 409,
      message: 'a release of this subaccount is already open',
      details: { releaseId },
    })
  }
}

/** The Idempotency-Key was used before for a release of another asset. */
export class IdempotencyKeyReusedError extends BusinessRuleError {
  constructor() {
    super('IDEMPOTENCY_KEY_REUSED', 'this Idempotency-Key was used for a different release request')
  }
}
