/**
 * The portfolio's answers as the API shows them (docs/ledger.md "Statement"): the period a query
 * names (a 400 when it cannot be answered), and the ledger's base units formatted as decimal
 * strings with each currency's decimals.
 */
import { SUMMARY_DEFAULT_SPAN_DAYS, SUMMARY_MAX_SPAN_DAYS } from '@wh/api-schemas/portfolio'
import { fromBaseUnits } from '@wh/core'
import { accountLabel, InvalidPeriodError, type portfolioSummary, type statement } from '@wh/ledger'
import type { FastifyBaseLogger } from 'fastify'
import { balanceOut } from '../subaccounts/index'
import type { listSubaccounts } from '../subaccounts/read'
import { decimalsOf } from './currencies'

const DAY_MS = 86_400_000
/**
 * Years 1..9999 in UTC. The schema's date-time has four-digit years, but an offset can still carry
 * an instant into year 0 or 10000, which Postgres would refuse in the query (a 500, not a 400).
 */
const EARLIEST_MS = Date.parse('0001-01-01T00:00:00Z')
const LATEST_MS = Date.parse('9999-12-31T23:59:59.999Z')

/** A query date-time (already format-checked by the schema) as a Date, or a 400. */
export function parseInstant(name: 'from' | 'to', value: string | undefined): Date | undefined {
  if (value === undefined) return undefined
  const d = new Date(value)
  const t = d.getTime()
  if (Number.isNaN(t) || t < EARLIEST_MS || t > LATEST_MS)
    throw new InvalidPeriodError(`${name} must be an ISO-8601 date-time in the years 1 to 9999 (UTC)`)
  return d
}

export function assertOrdered(from: Date | undefined, to: Date | undefined): void {
  if (from && to && from.getTime() >= to.getTime()) throw new InvalidPeriodError('from must be before to')
}

/** Formats base units of a currency; an unknown currency stays in base units (decimals 0), logged once. */
export function amountFormatter(log: FastifyBaseLogger) {
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

/** The summary's period: [from, to), by default the last SUMMARY_DEFAULT_SPAN_DAYS days ending `now`. */
export function summaryPeriod(query: { from?: string; to?: string }, now: Date): { from: Date; to: Date } {
  const to = parseInstant('to', query.to) ?? now
  const from =
    parseInstant('from', query.from) ??
    // not before year 1: a `to` early in year 1 would otherwise put the default start in year 0 (a 500)
    new Date(Math.max(EARLIEST_MS, to.getTime() - SUMMARY_DEFAULT_SPAN_DAYS * DAY_MS))
  assertOrdered(from, to)
  if (to.getTime() - from.getTime() > SUMMARY_MAX_SPAN_DAYS * DAY_MS)
    throw new InvalidPeriodError(`the period may span at most ${SUMMARY_MAX_SPAN_DAYS} days`)
  return { from, to }
}

type Formatter = ReturnType<typeof amountFormatter>

export function summaryView(
  summary: Awaited<ReturnType<typeof portfolioSummary>>,
  subaccounts: Awaited<ReturnType<typeof listSubaccounts>>,
  { decimals, format }: Formatter,
) {
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
}

export function statementView(page: Awaited<ReturnType<typeof statement>>, { format }: Formatter) {
  return {
    rows: page.rows.map((r) => ({
      eventId: r.eventId,
      type: r.type,
      occurredAt: r.occurredAt.toISOString(),
      recordedAt: r.recordedAt.toISOString(),
      postings: r.postings.map((p) => ({
        account: p.account,
        label: accountLabel(p.account),
        currency: p.currency,
        amount: format(p.currency, p.amount),
        balanceAfter: format(p.currency, p.balanceAfter),
      })),
    })),
    nextCursor: page.nextCursor,
  }
}
