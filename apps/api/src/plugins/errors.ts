/**
 * One error shape for the whole API (DESIGN): { statusCode, code, error, message }.
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
}

export function errorBody(statusCode: number, code: string, message: string): ErrorBodyValue {
  return { statusCode, code, error: STATUS_CODES[statusCode] ?? 'Error', message }
}

/** Maps any thrown value to the status and body the client sees. */
export function toErrorBody(err: unknown): ErrorBodyValue {
  if (err instanceof AppError) return errorBody(err.statusCode, err.code, err.message)
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

export function sendError(request: FastifyRequest, reply: FastifyReply, err: unknown): FastifyReply {
  const body = toErrorBody(err)
  if (body.statusCode >= 500 && body.statusCode !== 503) request.log.error({ err }, 'request failed')
  else if (body.statusCode === 503) request.log.warn({ code: body.code }, 'request refused: unavailable')
  if (body.statusCode === 503) reply.header('retry-after', String(RETRY_AFTER_SECONDS))
  return reply.code(body.statusCode).send(body)
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.addSchema(ErrorBody)
  app.setErrorHandler((err, request, reply) => sendError(request, reply, err))
  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send(errorBody(404, 'NOT_FOUND', `Route ${request.method} ${request.url.split('?')[0]} not found`)),
  )
}
