import { index, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core'

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
