import { sql } from 'drizzle-orm'
import { boolean, index, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core'

/**
 * One solvency run (docs/solvency.md "Continuous solvency"): per currency, what the platform holds
 * (each place it holds it: chain wallets, deposit addresses, the exchange, transfers in flight)
 * against what it owes (users' balances in the journal, fee revenue not collected). Kept for
 * history; the latest complete run is what the desk, the metrics and the stop read.
 */
export const solvencyRuns = pgTable(
  'solvency_runs',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    startedAt: timestamp('started_at', { withTimezone: true }).notNull(),
    finishedAt: timestamp('finished_at', { withTimezone: true }).notNull().defaultNow(),
    /** every leg was read; an incomplete run (a chain or the exchange did not answer) decides nothing */
    complete: boolean('complete').notNull(),
    /** [{ side, currency, kind, place, amount }]: amounts in base units, decimal strings */
    legs: jsonb('legs').notNull(),
    /** { currency: { assets, liabilities, surplus } }: base units, decimal strings, surplus signed */
    totals: jsonb('totals').notNull(),
    /** places holding more than the records explain (an uncredited deposit is found here) */
    surpluses: jsonb('surpluses').notNull(),
    /** what could not be read, by place */
    errors: jsonb('errors').notNull(),
  },
  (t) => [index('solvency_runs_finished_idx').on(t.finishedAt)],
)

/**
 * A deficit episode per currency: opened at the second complete run in a row that finds assets
 * short of liabilities by more than the epsilon (one reading can straddle a transfer), alerted
 * once, closed by the first complete run without it.
 */
export const solvencyDeficits = pgTable(
  'solvency_deficits',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    currency: text('currency').notNull(),
    openedAt: timestamp('opened_at', { withTimezone: true }).notNull().defaultNow(),
    openedRunId: uuid('opened_run_id').notNull(),
    /** the largest shortfall seen in the episode, base units */
    worst: text('worst').notNull(),
    closedAt: timestamp('closed_at', { withTimezone: true }),
    closedRunId: uuid('closed_run_id'),
  },
  (t) => [uniqueIndex('solvency_deficits_open_key').on(t.currency).where(sql`${t.closedAt} is null`)],
)
