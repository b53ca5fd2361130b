/**
 * GET /wheels/{id}/cycles (docs/trading.md "Economics"): the caller's wheel, one cycle per leg it
 * opened, newest first and cursor-paged like GET /positions, with each cycle's premium, fees,
 * settlement or buy-back cost, net and running net, and the wheel's return against holding the
 * underlying. Another user's wheel, or none, is a 404.
 */
import { CyclesQuery, WheelCyclesResponse, WheelParams } from '@wh/api-schemas/quotes'
import { bpsToNumber, type Clock, formatE18, formatUsdc, systemClock } from '@wh/core'
import type { Sql } from '@wh/db'
import { type WheelCycle, wheelCycles } from '@wh/trading'
import type { FastifyInstance } from 'fastify'
import type Type from 'typebox'
import { decodeCursor, encodeCursor, InvalidCursorError, pageLimit } from '../../lib/page'
import { currentUser, requireAuth } from '../../plugins/auth'

export interface WheelCyclesOptions {
  sql: Sql
  clock?: Clock
}

function cycleBody(c: WheelCycle) {
  return {
    positionId: c.positionId,
    cycle: c.cycle,
    side: c.side,
    state: c.state,
    instrument: c.instrument,
    strike: formatE18(c.strikeE18),
    expiry: c.expirySec === null ? null : new Date(c.expirySec * 1000).toISOString(),
    size: formatE18(c.sizeE18),
    outcome: c.outcome,
    premium: formatUsdc(c.premium),
    exchangeFees: formatUsdc(c.exchangeFee),
    platformFee: formatUsdc(c.platformFee),
    settlementCost: formatUsdc(c.settlementCost),
    closeCost: formatUsdc(c.closeCost),
    net: formatUsdc(c.net),
    cumulativeNet: formatUsdc(c.cumulativeNet),
    createdAt: c.createdAt.toISOString(),
    closedAt: c.closedAt?.toISOString() ?? null,
  }
}

export default async function wheelCyclesRoutes(app: FastifyInstance, opts: WheelCyclesOptions) {
  requireAuth(app)
  const clock = opts.clock ?? systemClock
  app.get<{ Params: Type.Static<typeof WheelParams>; Querystring: Type.Static<typeof CyclesQuery> }>(
    '/wheels/:id/cycles',
    {
      schema: {
        tags: ['positions'],
        summary: "A wheel's cycles with their economics, newest first, and its return against holding the asset",
        description:
          'Each leg the wheel opened: premium, the exchange fees and the platform fee (from its fills), the ' +
          'settlement or buy-back cost, the net and the running net (losing cycles included). `hold` values the ' +
          "starting USDC held in the underlying from the index at the wheel's start (stored 1m candles). 404 for " +
          "another user's wheel.",
        params: WheelParams,
        querystring: CyclesQuery,
        response: { 200: WheelCyclesResponse, 400: { $ref: 'ErrorBody#' }, 404: { $ref: 'ErrorBody#' } },
      },
    },
    async (request) => {
      const { userId } = currentUser(request)
      const limit = pageLimit(request.query.limit, 20, 100)
      const after = request.query.cursor ? decodeCursor(request.query.cursor) : undefined
      const w = await wheelCycles(opts.sql, userId, request.params.id, clock.now().getTime())
      // every cycle of the wheel is read (bounded): the cursor's leg is found by its id
      const all = [...w.cycles].reverse()
      const from = after ? all.findIndex((c) => c.positionId === after.id) + 1 : 0
      if (from === 0 && after) throw new InvalidCursorError()
      const newest = all.slice(from)
      const page = newest.slice(0, limit)
      const last = page.at(-1)
      return {
        wheelId: w.wheelId,
        asset: w.asset,
        state: w.state,
        startAmount: formatUsdc(w.startAmount),
        cycles: w.cycles.length,
        cumulativeNet: formatUsdc(w.cumulativeNet),
        wheelReturnBps: bpsToNumber(w.versusHold.wheelReturnBps),
        hold: {
          startIndex: formatE18(w.startIndexE18),
          index: formatE18(w.indexE18),
          value: formatUsdc(w.versusHold.holdValue),
          returnBps: bpsToNumber(w.versusHold.holdReturnBps),
        },
        items: page.map(cycleBody),
        nextCursor:
          newest.length > limit && last
            ? encodeCursor({ created_at_text: last.createdAtText, id: last.positionId })
            : null,
      }
    },
  )
}
