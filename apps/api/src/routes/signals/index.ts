/**
 * Signals (spec 4.2, 5.4; DESIGN): POST /webhooks/signals is authenticated by an HMAC of the raw
 * body and a timestamp header, never by a JWT; it records `signal_received` and moves the
 * pause/resume state of the sides it names in the same transaction. GET /signals/state is public.
 */

import { SignalAccepted, SignalBody, SignalHeaders, SignalStateResponse } from '@wh/api-schemas/signals'
import { AppError, type Clock, systemClock, UNDERLYINGS } from '@wh/core'
import type { Sql } from '@wh/db'
import { append } from '@wh/ledger'
import { MARKET_NAMES, type MarketNames, publishStrategyEvent, strategyNames } from '@wh/market'
import {
  SIGNAL_MAX_BODY_BYTES,
  SIGNAL_SIGNATURE_HEADER,
  SIGNAL_TIMESTAMP_HEADER,
  type Signal,
  sidesOf,
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
/** The signal's id was recorded before: a replay (or a resend) changes nothing. */
export class SignalReplayedError extends AppError {
  constructor(id: string) {
    super({ code: 'SIGNAL_REPLAYED', statusCode: 409, message: `signal ${id} was already received` })
  }
}
class InvalidJsonError extends AppError {
  constructor() {
    super({ code: 'BAD_REQUEST', statusCode: 400, message: 'body is not valid JSON' })
  }
}

const RAW = Symbol('rawBody')
type WithRaw = FastifyRequest & { [RAW]?: string }

interface StateRow {
  asset: string
  side: 'put' | 'call'
  paused: boolean
  reason: string | null
  source: string
  signal_id: string
  signal_at: Date
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
    {
      schema: {
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
      },
      // authentication runs before the body is validated: a stranger learns nothing about the schema
      preValidation: async (request) => {
        const header = (name: string) => {
          const v = request.headers[name]
          return typeof v === 'string' ? v : undefined
        }
        const verdict = verifySignal({
          secret: opts.secret,
          timestamp: header(SIGNAL_TIMESTAMP_HEADER),
          signature: header(SIGNAL_SIGNATURE_HEADER),
          rawBody: (request as WithRaw)[RAW] ?? '',
          now: clock.now(),
        })
        if (!verdict.ok) {
          request.log.warn({ reason: verdict.reason }, 'signal rejected')
          throw new SignalRejectedError()
        }
      },
    },
    async (request) => {
      const s = request.body
      const at = new Date(Number(request.headers[SIGNAL_TIMESTAMP_HEADER]) * 1000)
      const sides = sidesOf(s.side)
      const source = s.source ?? 'webhook'
      const applied = await sql.begin(async (tx) => {
        const r = await append(tx, {
          type: 'signal_received',
          payload: {
            signalId: s.id,
            source,
            data: { asset: s.asset, side: s.side, action: s.action, ...(s.reason && { reason: s.reason }) },
          },
          occurredAt: at,
        })
        if (r.duplicate) throw new SignalReplayedError(s.id)
        // a late signal older than the stored one is recorded but does not undo the newer decision
        const rows = await tx`
          insert into signal_state (asset, side, paused, reason, signal_id, source, signal_at)
          select ${s.asset}, side, ${s.action === 'pause'}, ${s.reason ?? null}, ${s.id}, ${source}, ${at}
          from unnest(${sides as string[]}::text[]) as side
          on conflict (asset, side) do update set
            paused = excluded.paused, reason = excluded.reason, signal_id = excluded.signal_id,
            source = excluded.source, signal_at = excluded.signal_at, updated_at = now()
          where signal_state.signal_at <= excluded.signal_at
          returning side`
        return rows.length === sides.length
      })
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

  app.get(
    '/signals/state',
    {
      schema: {
        tags: ['signals'],
        summary: 'Whether selling is active or paused per asset and side',
        response: { 200: SignalStateResponse },
      },
    },
    async () => {
      const rows = await sql<StateRow[]>`
        select asset, side, paused, reason, source, signal_id, signal_at from signal_state`
      const find = (asset: string, side: 'put' | 'call') => {
        const r = rows.find((x) => x.asset === asset && x.side === side)
        return r
          ? {
              selling: r.paused ? ('paused' as const) : ('active' as const),
              reason: r.reason,
              source: r.source,
              signalId: r.signal_id,
              since: r.signal_at.toISOString(),
            }
          : { selling: 'active' as const, reason: null, source: null, signalId: null, since: null }
      }
      return { assets: UNDERLYINGS.map((asset) => ({ asset, put: find(asset, 'put'), call: find(asset, 'call') })) }
    },
  )
}
