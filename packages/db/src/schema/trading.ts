import { boolean, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core'

/**
 * The latest signal per asset and option side (docs/trading.md "Signals"): whether selling is
 * paused. Written by POST /webhooks/signals in the transaction that records signal_received; a
 * signal older than the one stored does not overwrite it (late delivery cannot undo a newer one).
 */
export const signalState = pgTable(
  'signal_state',
  {
    /** the underlying (ETH, BTC) */
    asset: text('asset').notNull(),
    /** 'put' | 'call' */
    side: text('side').notNull(),
    paused: boolean('paused').notNull(),
    reason: text('reason'),
    signalId: text('signal_id').notNull(),
    source: text('source').notNull(),
    /** the sender's time of the signal (its timestamp header) */
    signalAt: timestamp('signal_at', { withTimezone: true }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.asset, t.side] })],
)

export type SignalStateRow = typeof signalState.$inferSelect
