/**
 * The base of every expected failure: a stable `code` the caller can act on,
 * the HTTP status the API answers with, and whether a retry can help.
 * The API maps these to Fastify's error shape in one plugin (apps/api/src/plugins/errors.ts).
 *
 * @example
 *   throw new AppError({ code: 'WITHDRAWAL_BELOW_MINIMUM', statusCode: 422, message: 'amount below minimum' })
 */
export class AppError extends Error {
  readonly code: string
  readonly statusCode: number
  readonly retryable: boolean
  readonly details: Readonly<Record<string, unknown>> | undefined

  constructor(opts: {
    code: string
    message: string
    statusCode?: number
    retryable?: boolean
    details?: Record<string, unknown>
    cause?: unknown
  }) {
    super(opts.message, opts.cause === undefined ? undefined : { cause: opts.cause })
    this.name = new.target.name
    this.code = opts.code
    this.statusCode = opts.statusCode ?? 500
    this.retryable = opts.retryable ?? false
    this.details = opts.details
  }
}

/** spec 7: a protected route reached without a valid bearer token. */
export class UnauthorizedError extends AppError {
  constructor() {
    super({ code: 'UNAUTHORIZED', statusCode: 401, message: 'A valid bearer token is required' })
  }
}

/** A resource that does not exist (or is not the caller's). */
export class NotFoundError extends AppError {
  constructor(what: string) {
    super({ code: 'NOT_FOUND', statusCode: 404, message: `${what} not found` })
  }
}

/** A business rule refused the request (spec 7: 422 with its own code). */
export class BusinessRuleError extends AppError {
  constructor(code: string, message: string, details?: Record<string, unknown>) {
    super({ code, statusCode: 422, message, ...(details ? { details } : {}) })
  }
}
