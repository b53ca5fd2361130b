import { sql } from 'drizzle-orm'
import { index, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core'

/**
 * What operators did, and why (docs/hostile-world.md): resuming a chain halted by a reorg, deciding
 * a held transaction. Append-only; each row names the action, what it acted on, who and why.
 */
export const operatorActions = pgTable(
  'operator_actions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    /** chain_resumed | outbound_rechecked | outbound_failed | … */
    action: text('action').notNull(),
    /** what it acted on: a chain name, an outbound transaction id, … */
    subject: text('subject').notNull(),
    /** who (the operator's name as they gave it, or the OS user running the command) */
    actor: text('actor').notNull(),
    reason: text('reason').notNull(),
    details: jsonb('details'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('operator_actions_subject_idx').on(t.subject, t.createdAt)],
)

/**
 * The platform-wide stop (docs/solvency.md "The platform stop"): while a row has no `cleared_at`,
 * new positions and withdrawals above a bound are refused. Raised by a solvency deficit (or by an
 * operator), cleared only by an operator; at most one open at a time.
 */
export const platformStops = pgTable(
  'platform_stops',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    raisedAt: timestamp('raised_at', { withTimezone: true }).notNull().defaultNow(),
    /** 'solvency' (a deficit episode) or 'operator' */
    raisedBy: text('raised_by').notNull(),
    reason: text('reason').notNull(),
    details: jsonb('details'),
    clearedAt: timestamp('cleared_at', { withTimezone: true }),
    clearedBy: text('cleared_by'),
    clearReason: text('clear_reason'),
  },
  (t) => [uniqueIndex('platform_stops_open_key').on(t.raisedBy).where(sql`${t.clearedAt} is null`)],
)
