/**
 * One error shape for the whole API (spec 7): { statusCode, code, error, message, details? }; details
 * only on client errors, with what the client can act on.
 * AppErrors carry their code and status; Fastify's own 4xx (validation, bad JSON, body too
 * large, wrong content type) keep theirs; Postgres or Redis out of reach is a 503
 * SERVICE_UNAVAILABLE (dependency-errors.ts); anything else is a 500 whose detail stays in the log.
 */
import { STATUS_CODES } from 'node:http'
import { ErrorBody } from '@wh/api-schemas/errors'
import { AppError } from '@wh/core'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { isDependencyUnavailable } from './dependency-errors'

export { ErrorBody }

export interface ErrorBodyValue {
  statusCode: number
  code: string
  error: string
  message: string
  details?: Record<string, string | number | boolean | null>
}

/** A detail's string is cut here: details explain, they do not echo bodies back. */
const DETAIL_MAX_CHARS = 200

/**
 * What a client error's details may show: its plain values (bigints as decimal strings, strings
 * bounded); nested objects are left out (they are context for the log, not for the client). Only
 * for 4xx: a server error's details stay in the log.
 */
function publicDetails(details: Readonly<Record<string, unknown>> | undefined): ErrorBodyValue['details'] {
  if (!details) return undefined
  const out: NonNullable<ErrorBodyValue['details']> = {}
  for (const [k, v] of Object.entries(details)) {
    if (typeof v === 'bigint') out[k] = v.toString()
    else if (typeof v === 'string') out[k] = v.slice(0, DETAIL_MAX_CHARS)
    else if (typeof v === 'boolean' || v === null || (typeof v === 'number' && Number.isFinite(v))) out[k] = v
  }
  return Object.keys(out).length > 0 ? out : undefined
}

export function errorBody(statusCode: number, code: string, message: string): ErrorBodyValue {
  return { statusCode, code, error: STATUS_CODES[statusCode] ?? 'Error', message }
}

/** Maps any thrown value to the status and body the client sees. */
export function toErrorBody(err: unknown): ErrorBodyValue {
  if (err instanceof AppError) {
    const body = errorBody(err.statusCode, err.code, err.message)
    const details = err.statusCode < 500 ? publicDetails(err.details) : undefined
    return details ? { ...body, details } : body
  }
  const fe = err as Partial<FastifyError> & { validation?: unknown }
  if (fe?.validation) return errorBody(400, 'VALIDATION_ERROR', fe.message ?? 'invalid request')
  const status = typeof fe?.statusCode === 'number' ? fe.statusCode : 500
  if (status >= 400 && status < 500) {
    const code =
      status === 413
        ? 'PAYLOAD_TOO_LARGE'
        : status === 414
          ? 'URI_TOO_LONG'
          : status === 415
            ? 'UNSUPPORTED_MEDIA_TYPE'
            : 'BAD_REQUEST'
    return errorBody(status, code, fe.message ?? 'bad request')
  }
  // Postgres or Redis out of reach: nothing is wrong with the request, it may be sent again shortly
  if (status === 503 || isDependencyUnavailable(err))
    return errorBody(503, 'SERVICE_UNAVAILABLE', 'A dependency is unavailable, try again shortly')
  return errorBody(500, 'INTERNAL_ERROR', 'Internal error')
}

/** A 503 says when to come back: a dependency or the price feed is expected back within seconds. */
export const RETRY_AFTER_SECONDS = 5
/** A 429 of a per-minute limit of ours (withdrawal requests) says: the next minute. */
export const RATE_LIMIT_RETRY_AFTER_SECONDS = 60

/**
 * The one place an answer says when to come back (Retry-After, in seconds): what the error says
 * (`details.retryAfterS`, as a throttled sign-in's), else RETRY_AFTER_SECONDS on a 503, else on a
 * 429 RATE_LIMIT_RETRY_AFTER_SECONDS unless a rate-limit plugin set its own first.
 */
export function setRetryAfter(reply: FastifyReply, statusCode: number, err?: unknown): void {
  const said = err instanceof AppError ? err.details?.retryAfterS : undefined
  if (typeof said === 'number' && Number.isFinite(said) && said > 0)
    reply.header('retry-after', String(Math.ceil(said)))
  else if (statusCode === 503) reply.header('retry-after', String(RETRY_AFTER_SECONDS))
  else if (statusCode === 429 && !reply.hasHeader('retry-after'))
    reply.header('retry-after', String(RATE_LIMIT_RETRY_AFTER_SECONDS))
}

export function sendError(request: FastifyRequest, reply: FastifyReply, err: unknown): FastifyReply {
  const body = toErrorBody(err)
  if (body.statusCode >= 500 && body.statusCode !== 503) request.log.error({ err }, 'request failed')
  else if (body.statusCode === 503) request.log.warn({ code: body.code }, 'request refused: unavailable')
  setRetryAfter(reply, body.statusCode, err)
  return reply.code(body.statusCode).send(body)
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.addSchema(ErrorBody)
  app.setErrorHandler((err, request, reply) => sendError(request, reply, err))
  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send(errorBody(404, 'NOT_FOUND', `Route ${request.method} ${request.url.split('?')[0]} not found`)),
  )
}
