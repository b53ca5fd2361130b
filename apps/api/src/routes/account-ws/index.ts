/**
 * WS /ws/account (docs/account-stream.md): the signed-in user's own events (deposits, withdrawals,
 * legs, orders, fills, settlements, conversions, wheels, subaccount stops) as they are written to
 * account_events by migration 0021's triggers, resumable by sequence number without gaps. The
 * process's AccountStreams LISTENs once and reads a woken user's events once for all their sockets.
 */
import { type Clock, systemClock } from '@wh/core'
import type { Sql } from '@wh/db'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { errorBody } from '../../plugins/errors'
import { openAccountSession } from './session'
import { AccountStreams } from './streams'

export interface AccountWsOptions {
  sql: Sql
  clock?: Clock
  /** how long a connection may wait before its token (tests shorten it) */
  authTimeoutMs?: number
}

declare module 'fastify' {
  interface FastifyInstance {
    accountStreams: AccountStreams
  }
}

async function accountWsRoutes(app: FastifyInstance, opts: AccountWsOptions) {
  const streams = new AccountStreams(opts.sql, app.log)
  streams.start()
  app.decorate('accountStreams', streams)
  app.addHook('onClose', async () => streams.close())
  const deps = {
    sql: opts.sql,
    streams,
    clock: opts.clock ?? systemClock,
    ...(opts.authTimeoutMs !== undefined && { authTimeoutMs: opts.authTimeoutMs }),
  }

  app.route({
    method: 'GET',
    url: '/ws/account',
    schema: {
      tags: ['account'],
      summary: 'WebSocket: the signed-in user’s own events, resumable by sequence number (docs/account-stream.md)',
      description:
        'Upgrade to a WebSocket. The bearer token goes in the first message {type:"auth",token} (within 5 s) or in ' +
        'the Sec-WebSocket-Protocol header (protocols ["wh.bearer", token]); never in the URL (closed 4400). ' +
        'A bad or expired token closes 4401. Then {type:"subscribe",fromSeq?}: a snapshot, or the events after ' +
        'fromSeq then {type:"replayed"} (or {type:"resnapshot"} when too many or too old), then live ' +
        '{type:"event",seq,kind,at,data}. Schemas: the AsyncAPI document (/docs/asyncapi.json).',
      response: { 426: { $ref: 'ErrorBody#' } },
    },
    handler: async (_request: FastifyRequest, reply: FastifyReply) =>
      reply
        .code(426)
        .header('upgrade', 'websocket')
        .send(errorBody(426, 'UPGRADE_REQUIRED', 'Connect with a WebSocket')),
    wsHandler: (socket, request) => openAccountSession(app, deps, socket, request),
  })
}

/** Not encapsulated: `app.accountStreams` (its counters) is visible to the whole server (metrics, tests). */
export default fp(accountWsRoutes, { name: 'account-ws' })
