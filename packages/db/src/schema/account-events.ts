import { bigint, jsonb, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core'

/**
 * A user's own events for WS /ws/account (docs/account-stream.md), append-only. Written only by
 * the deferred triggers of migration 0021 on deposits, withdrawals, positions, position_fills,
 * wheels, conversions and subaccounts; `seq` is per user, gap-free and increasing.
 */
export const accountEvents = pgTable(
  'account_events',
  {
    userId: uuid('user_id').notNull(),
    seq: bigint('seq', { mode: 'number' }).notNull(),
    /** deposit.credited, withdrawal.requested, fill, … (docs/account-stream.md "Events") */
    kind: text('kind').notNull(),
    payload: jsonb('payload').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.seq] })],
)

/** Each user's last `seq`, bumped by the triggers' upsert (it serialises one user's events). */
export const accountEventSeqs = pgTable('account_event_seqs', {
  userId: uuid('user_id').primaryKey(),
  seq: bigint('seq', { mode: 'number' }).notNull(),
})

export type AccountEventRow = typeof accountEvents.$inferSelect
