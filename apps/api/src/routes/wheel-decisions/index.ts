/**
 * GET /wheels/{id}/decisions (docs/trading.md "Why: the decision log"): why the caller's wheel
 * opened, chose, waited or skipped each leg, newest first, a page at a time. Another user's wheel
 * (or none) answers 404. The rows and their messages come from @wh/trading's decisions.ts.
 */
import {
  DecisionsPage,
  DecisionsParams,
  DecisionsQuery,
  PAGE_LIMIT_DEFAULT,
  PAGE_LIMIT_MAX,
} from '@wh/api-schemas/decisions'
import { NotFoundError } from '@wh/core'
import type { Sql } from '@wh/db'
import { listDecisions } from '@wh/trading'
import type { FastifyInstance } from 'fastify'
import type Type from 'typebox'
import { InvalidCursorError, pageLimit } from '../../lib/page'
import { currentUser, requireAuth } from '../../plugins/auth'

export interface WheelDecisionRoutesOptions {
  sql: Sql
}

/** The cursor is the last row's sequence number, base64url (the log is ordered by it, not by time). */
const encodeCursor = (seq: string) => Buffer.from(`d:${seq}`).toString('base64url')
function decodeCursor(cursor: string): string {
  const m = /^d:([0-9]{1,18})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'))
  if (!m?.[1]) throw new InvalidCursorError()
  return m[1]
}

export default async function wheelDecisionRoutes(app: FastifyInstance, opts: WheelDecisionRoutesOptions) {
  requireAuth(app)
  app.get<{ Params: Type.Static<typeof DecisionsParams>; Querystring: Type.Static<typeof DecisionsQuery> }>(
    '/wheels/:id/decisions',
    {
      schema: {
        tags: ['positions'],
        summary: "Why the caller's wheel chose, waited or skipped each leg: its decisions, newest first",
        description:
          'Each decision has a kind, a reason code, the facts it was taken on (the expiries and strikes ' +
          'considered with their tenor, delta, mark and annualised yield, and the one chosen) and a one-line ' +
          'message. A wait repeated tick after tick is one decision. 404 for a wheel that is not the caller’s.',
        params: DecisionsParams,
        querystring: DecisionsQuery,
        response: { 200: DecisionsPage, 400: { $ref: 'ErrorBody#' }, 404: { $ref: 'ErrorBody#' } },
      },
    },
    async (request) => {
      const { userId } = currentUser(request)
      const limit = pageLimit(request.query.limit, PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX)
      const beforeSeq = request.query.cursor ? decodeCursor(request.query.cursor) : undefined
      const page = await listDecisions(opts.sql, userId, request.params.id, { limit, ...(beforeSeq && { beforeSeq }) })
      if (!page) throw new NotFoundError('wheel')
      return {
        decisions: page.items,
        nextCursor: page.nextSeq === null ? null : encodeCursor(page.nextSeq),
      }
    },
  )
}
