/**
 * The caller's portfolio (spec 4.2): GET /portfolio/summary and GET /portfolio/statement,
 * both behind the bearer guard (spec 5.2 rule 4). The figures come from @wh/ledger in base units;
 * this controller picks the period, formats every amount as a decimal string with its currency's
 * decimals and answers JSON, or CSV for a statement export.
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
import { type Clock, fromBaseUnits, systemClock } from '@wh/core'
import type { Sql } from '@wh/db'
import { InvalidPeriodError, portfolioSummary, statement, statementToCsv } from '@wh/ledger'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import { currentUser, requireAuth } from '../../plugins/auth'
import { balanceOut } from '../subaccounts/index'
import { listSubaccounts } from '../subaccounts/read'
import { decimalsOf } from './currencies'

export interface PortfolioRoutesOptions {
  sql: Sql
  /** "now" of the default summary period */
  clock?: Clock
}

const DAY_MS = 86_400_000
/**
 * Years 1..9999 in UTC. The schema's date-time has four-digit years, but an offset can still carry
 * an instant into year 0 or 10000, which Postgres would refuse in the query (a 500, not a 400).
 */
const EARLIEST_MS = Date.parse('0001-01-01T00:00:00Z')
const LATEST_MS = Date.parse('9999-12-31T23:59:59.999Z')

/** A query date-time (already format-checked by the schema) as a Date, or a 400. */
function parseInstant(name: 'from' | 'to', value: string | undefined): Date | undefined {
  if (value === undefined) return undefined
  const d = new Date(value)
  const t = d.getTime()
  if (Number.isNaN(t) || t < EARLIEST_MS || t > LATEST_MS)
    throw new InvalidPeriodError(`${name} must be an ISO-8601 date-time in the years 1 to 9999 (UTC)`)
  return d
}

function assertOrdered(from: Date | undefined, to: Date | undefined): void {
  if (from && to && from.getTime() >= to.getTime()) throw new InvalidPeriodError('from must be before to')
}

/** Formats base units of a currency; an unknown currency stays in base units (decimals 0), logged once. */
function amountFormatter(log: FastifyBaseLogger) {
  const warned = new Set<string>()
  const decimals = (currency: string): number => {
    const d = decimalsOf(currency)
    if (d !== undefined) return d
    if (!warned.has(currency)) {
      warned.add(currency)
      log.warn({ currency }, 'portfolio: currency without known decimals, amounts shown in base units')
    }
    return 0
  }
  return { decimals, format: (currency: string, units: bigint) => fromBaseUnits(units, decimals(currency)) }
}

export default async function portfolioRoutes(app: FastifyInstance, opts: PortfolioRoutesOptions) {
  requireAuth(app)
  const clock = opts.clock ?? systemClock
  const errors = { 400: { $ref: 'ErrorBody#' } }

  app.get<{ Querystring: SummaryQueryValue }>(
    '/portfolio/summary',
    {
      schema: {
        tags: ['portfolio'],
        summary: 'Balances per asset now, and income, expenses, net deposits and return over a period',
        description:
          `Period [from, to), at most ${SUMMARY_MAX_SPAN_DAYS} days; by default the last ` +
          `${SUMMARY_DEFAULT_SPAN_DAYS} days ending now. Amounts are decimal strings in each currency's unit.`,
        querystring: SummaryQuery,
        response: { 200: SummaryResponse, ...errors },
      },
    },
    async (request) => {
      const { userId } = currentUser(request)
      const to = parseInstant('to', request.query.to) ?? clock.now()
      const from =
        parseInstant('from', request.query.from) ??
        // not before year 1: a `to` early in year 1 would otherwise put the default start in year 0 (a 500)
        new Date(Math.max(EARLIEST_MS, to.getTime() - SUMMARY_DEFAULT_SPAN_DAYS * DAY_MS))
      assertOrdered(from, to)
      if (to.getTime() - from.getTime() > SUMMARY_MAX_SPAN_DAYS * DAY_MS)
        throw new InvalidPeriodError(`the period may span at most ${SUMMARY_MAX_SPAN_DAYS} days`)

      const [summary, subaccounts] = await Promise.all([
        portfolioSummary(opts.sql, userId, { from, to }),
        listSubaccounts(opts.sql, userId),
      ])
      const { decimals, format } = amountFormatter(request.log)
      return {
        from: summary.from.toISOString(),
        to: summary.to.toISOString(),
        assets: summary.assets.map((a) => {
          const f = (units: bigint) => format(a.currency, units)
          return {
            currency: a.currency,
            decimals: decimals(a.currency),
            freeBalance: f(a.freeBalance),
            inSubaccounts: f(a.inSubaccounts),
            pendingWithdrawals: f(a.pendingWithdrawals),
            pendingFundings: f(a.pendingFundings),
            income: { premium: f(a.income.premium), interest: f(a.income.interest), funding: f(a.income.funding) },
            expenses: {
              exchangeFee: f(a.expenses.exchange_fee),
              settlement: f(a.expenses.settlement),
              swap: f(a.expenses.swap),
              borrow: f(a.expenses.borrow),
            },
            netDeposits: f(a.netDeposits),
            periodReturn: f(a.periodReturn),
          }
        }),
        subaccounts: subaccounts.map((s) => ({
          asset: s.asset,
          exchangeId: s.exchangeId,
          state: s.state,
          stopReason: s.stopReason,
          balances: s.balances.map(balanceOut),
        })),
      }
    },
  )

  app.get<{ Querystring: StatementQueryValue }>(
    '/portfolio/statement',
    {
      schema: {
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
      },
    },
    async (request, reply) => {
      const { userId } = currentUser(request)
      const q = request.query
      const from = parseInstant('from', q.from)
      const to = parseInstant('to', q.to)
      assertOrdered(from, to)

      const page = await statement(opts.sql, userId, { from, to, cursor: q.cursor, limit: q.limit })
      const { format } = amountFormatter(request.log)
      if (q.format === 'csv') {
        if (page.nextCursor) reply.header('x-next-cursor', page.nextCursor)
        return reply
          .type('text/csv; charset=utf-8')
          .header('content-disposition', 'attachment; filename="statement.csv"')
          .send(statementToCsv(page.rows, format))
      }
      return {
        rows: page.rows.map((r) => ({
          eventId: r.eventId,
          type: r.type,
          occurredAt: r.occurredAt.toISOString(),
          recordedAt: r.recordedAt.toISOString(),
          postings: r.postings.map((p) => ({
            account: p.account,
            currency: p.currency,
            amount: format(p.currency, p.amount),
            balanceAfter: format(p.currency, p.balanceAfter),
          })),
        })),
        nextCursor: page.nextCursor,
      }
    },
  )
}
