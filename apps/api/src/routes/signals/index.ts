/**
 * Signals (spec 4.2, 5.4; docs/trading.md "Signals"): POST /webhooks/signals is authenticated by an
 * HMAC of the raw body and a timestamp header, never by a JWT; @wh/trading's `recordSignal` records
 * `signal_received` and moves the pause/resume state of the sides it names in one transaction.
 * GET /signals/state is public.
 */

import { SignalAccepted, SignalBody, SignalHeaders, SignalStateResponse } from '@wh/api-schemas/signals'
import { AppError, type Clock, systemClock } from '@wh/core'
import type { Sql } from '@wh/db'
import { MARKET_NAMES, type MarketNames, publishStrategyEvent, strategyNames } from '@wh/market'
import {
  readSignalState,
  recordSignal,
  SIGNAL_MAX_BODY_BYTES,
  SIGNAL_SIGNATURE_HEADER,
  SIGNAL_TIMESTAMP_HEADER,
  type Signal,
  verifySignal,
} from '@wh/trading'
import type { FastifyInstance, FastifyRequest } from 'fastify'

export interface SignalRoutesOptions {
  sql: Sql
  /** WEBHOOK_SECRET */
  secret: string
  clock?: Clock
  /** pause/resume are published on /ws/strategies through this Redis (none: not published) */
  redis?: import('ioredis').Redis
  names?: MarketNames
}

/** Any failed authentication of a signal: one opaque answer, the reason stays in our log. */
export class SignalRejectedError extends AppError {
  constructor() {
    super({ code: 'SIGNAL_REJECTED', statusCode: 401, message: 'signal signature or timestamp rejected' })
  }
}
class InvalidJsonError extends AppError {
  constructor() {
    super({ code: 'BAD_REQUEST', statusCode: 400, message: 'body is not valid JSON' })
  }
}

const RAW = Symbol('rawBody')
type WithRaw = FastifyRequest & { [RAW]?: string }

const signalSchema = {
  tags: ['signals'],
  summary: 'Receive a trading signal (HMAC-signed, no JWT)',
  description:
    'Pauses or resumes selling one side (or both) of an asset. Signed with WEBHOOK_SECRET: ' +
    `${SIGNAL_SIGNATURE_HEADER} = sha256=hex(HMAC-SHA256(secret, timestamp + "." + raw body)), ` +
    `${SIGNAL_TIMESTAMP_HEADER} = unix seconds within 5 minutes of the server clock. ` +
    'Each signal id is accepted once; a replay answers 409.',
  headers: SignalHeaders,
  body: SignalBody,
  response: {
    200: SignalAccepted,
    400: { $ref: 'ErrorBody#' },
    401: { $ref: 'ErrorBody#' },
    409: { $ref: 'ErrorBody#' },
    413: { $ref: 'ErrorBody#' },
  },
}
const stateSchema = {
  tags: ['signals'],
  summary: 'Whether selling is active or paused per asset and side',
  response: { 200: SignalStateResponse },
}

/** Authenticates a signal by its HMAC and timestamp before its body is validated (one opaque 401). */
function authenticate(secret: string, clock: Clock) {
  return async (request: FastifyRequest) => {
    const header = (name: string) => {
      const v = request.headers[name]
      return typeof v === 'string' ? v : undefined
    }
    const verdict = verifySignal({
      secret,
      timestamp: header(SIGNAL_TIMESTAMP_HEADER),
      signature: header(SIGNAL_SIGNATURE_HEADER),
      rawBody: (request as WithRaw)[RAW] ?? '',
      now: clock.now(),
    })
    if (!verdict.ok) {
      request.log.warn({ reason: verdict.reason }, 'signal rejected')
      throw new SignalRejectedError()
    }
  }
}

export default async function signalRoutes(app: FastifyInstance, opts: SignalRoutesOptions) {
  const { sql } = opts
  const clock = opts.clock ?? systemClock

  // the MAC covers the bytes as sent, so this scope keeps them (and parses them itself), in place
  // of the API's JSON parser
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'string', bodyLimit: SIGNAL_MAX_BODY_BYTES },
    (request, body, done) => {
      ;(request as WithRaw)[RAW] = body as string
      try {
        done(null, JSON.parse(body as string))
      } catch {
        done(new InvalidJsonError(), undefined)
      }
    },
  )

  app.post<{ Body: Signal }>(
    '/webhooks/signals',
    // authentication runs before the body is validated: a stranger learns nothing about the schema
    { schema: signalSchema, preValidation: authenticate(opts.secret, clock) },
    async (request) => {
      const s = request.body
      const at = new Date(Number(request.headers[SIGNAL_TIMESTAMP_HEADER]) * 1000)
      const { sides, applied } = await recordSignal(sql, s, at)
      request.log.info({ signalId: s.id, asset: s.asset, side: s.side, action: s.action, applied }, 'signal received')
      if (applied && opts.redis)
        await publishStrategyEvent(opts.redis, strategyNames(opts.names ?? MARKET_NAMES), s.asset, {
          ts: clock.now().toISOString(),
          event: 'signal',
          sides: [...sides],
          action: s.action,
          reason: s.reason ?? null,
        }).catch((err) => request.log.warn({ err: String(err) }, 'signal event not published'))
      return { signalId: s.id, asset: s.asset, sides: [...sides], action: s.action, applied }
    },
  )

  app.get('/signals/state', { schema: stateSchema }, () => readSignalState(sql))
}
