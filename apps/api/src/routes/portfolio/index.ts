/**
 * The caller's portfolio (spec 4.2): GET /portfolio/summary and GET /portfolio/statement,
 * both behind the bearer guard (spec 5.2 rule 4). The figures come from @wh/ledger in base units;
 * views.ts picks the period and formats every amount as a decimal string with its currency's
 * decimals; a statement export answers CSV.
 */

import {
  StatementCsv,
  StatementQuery,
  type StatementQueryValue,
  StatementResponse,
  SUMMARY_DEFAULT_SPAN_DAYS,
  SUMMARY_MAX_SPAN_DAYS,
  SummaryQuery,
  type SummaryQueryValue,
  SummaryResponse,
} from '@wh/api-schemas/portfolio'
import { type Clock, systemClock } from '@wh/core'
import type { Sql } from '@wh/db'
import { portfolioSummary, statement, statementToCsv } from '@wh/ledger'
import type { FastifyInstance } from 'fastify'
import { currentUser, requireAuth } from '../../plugins/auth'
import { listSubaccounts } from '../subaccounts/read'
import { amountFormatter, assertOrdered, parseInstant, statementView, summaryPeriod, summaryView } from './views'

export interface PortfolioRoutesOptions {
  sql: Sql
  /** "now" of the default summary period */
  clock?: Clock
}

const errors = { 400: { $ref: 'ErrorBody#' } }
const summarySchema = {
  tags: ['portfolio'],
  summary: 'Balances per asset now, and income, expenses, net deposits and return over a period',
  description:
    `Period [from, to), at most ${SUMMARY_MAX_SPAN_DAYS} days; by default the last ` +
    `${SUMMARY_DEFAULT_SPAN_DAYS} days ending now. Amounts are decimal strings in each currency's unit.`,
  querystring: SummaryQuery,
  response: { 200: SummaryResponse, ...errors },
}
const statementSchema = {
  tags: ['portfolio'],
  summary: 'Ledger events in time order with their postings and running balances, paginated',
  description:
    'Running balances count from the first event, not from `from`. `format=csv` answers text/csv ' +
    '(one line per posting) and the next cursor in the `x-next-cursor` header.',
  querystring: StatementQuery,
  response: {
    200: {
      headers: {
        'x-next-cursor': { type: 'string', description: 'the cursor of the next page, when there is one' },
      },
      content: {
        'application/json': { schema: StatementResponse },
        'text/csv': { schema: StatementCsv },
      },
    },
    ...errors,
  },
}

export default async function portfolioRoutes(app: FastifyInstance, opts: PortfolioRoutesOptions) {
  requireAuth(app)
  const clock = opts.clock ?? systemClock

  app.get<{ Querystring: SummaryQueryValue }>('/portfolio/summary', { schema: summarySchema }, async (request) => {
    const { userId } = currentUser(request)
    const period = summaryPeriod(request.query, clock.now())
    const [summary, subaccounts] = await Promise.all([
      portfolioSummary(opts.sql, userId, period),
      listSubaccounts(opts.sql, userId),
    ])
    return summaryView(summary, subaccounts, amountFormatter(request.log))
  })

  app.get<{ Querystring: StatementQueryValue }>(
    '/portfolio/statement',
    { schema: statementSchema },
    async (request, reply) => {
      const { userId } = currentUser(request)
      const q = request.query
      const from = parseInstant('from', q.from)
      const to = parseInstant('to', q.to)
      assertOrdered(from, to)
      const page = await statement(opts.sql, userId, { from, to, cursor: q.cursor, limit: q.limit })
      const formatter = amountFormatter(request.log)
      // both formats name the next page in the header too (a client following headers needs no body parse)
      if (page.nextCursor) reply.header('x-next-cursor', page.nextCursor)
      if (q.format !== 'csv') return statementView(page, formatter)
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', 'attachment; filename="statement.csv"')
        .send(statementToCsv(page.rows, formatter.format))
    },
  )
}
