/**
 * GET /wheels/{id}/cycles (docs/trading.md "Economics"): the caller's wheel, one cycle per leg it
 * opened, newest first and cursor-paged like GET /positions, with each cycle's premium, fees,
 * settlement or buy-back cost, net and running net, and the wheel's return against holding the
 * underlying. Another user's wheel, or none, is a 404.
 */
import { CyclesQuery, WheelCyclesResponse, WheelParams } from '@wh/api-schemas/quotes'
import { type Clock, fromBaseUnits, systemClock } from '@wh/core'
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

const usdc = (v: bigint) => fromBaseUnits(v, 6)
const e18 = (v: bigint | null) => (v === null ? null : fromBaseUnits(v, 18))
const bps = (v: bigint | null) => (v === null ? null : Number(v))

function cycleBody(c: WheelCycle) {
  return {
    positionId: c.positionId,
    cycle: c.cycle,
    side: c.side,
    state: c.state,
    instrument: c.instrument,
    strike: e18(c.strikeE18),
    expiry: c.expirySec === null ? null : new Date(c.expirySec * 1000).toISOString(),
    size: fromBaseUnits(c.sizeE18, 18),
    outcome: c.outcome,
    premium: usdc(c.premium),
    exchangeFees: usdc(c.exchangeFee),
    platformFee: usdc(c.platformFee),
    settlementCost: usdc(c.settlementCost),
    closeCost: usdc(c.closeCost),
    net: usdc(c.net),
    cumulativeNet: usdc(c.cumulativeNet),
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
        startAmount: usdc(w.startAmount),
        cycles: w.cycles.length,
        cumulativeNet: usdc(w.cumulativeNet),
        wheelReturnBps: bps(w.versusHold.wheelReturnBps),
        hold: {
          startIndex: e18(w.startIndexE18),
          index: e18(w.indexE18),
          value: w.versusHold.holdValue === null ? null : usdc(w.versusHold.holdValue),
          returnBps: bps(w.versusHold.holdReturnBps),
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
