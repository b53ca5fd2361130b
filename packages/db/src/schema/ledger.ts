import { sql } from 'drizzle-orm'
import {
  bigint,
  customType,
  index,
  integer,
  jsonb,
  numeric,
  pgTable,
  primaryKey,
  smallint,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core'

/**
 * The ledger's tables (spec 2.4, 6, 6.1). Written only through @wh/ledger's append, which
 * calls the `ledger_append` SQL function of drizzle/0001_ledger.sql. That migration also adds
 * what drizzle cannot express: the deferred zero-sum constraint trigger and the triggers that
 * make events and postings append-only (a correction is a new event, docs/ledger.md).
 *
 * Money is numeric(78,0): base units of the currency, signed (spec 2.4: no debit/credit columns).
 */

/** xid8: the transaction that wrote an event, so postings can only join an event of their own transaction. */
const xid8 = customType<{ data: string }>({ dataType: () => 'xid8' })

export const ledgerEvents = pgTable(
  'ledger_events',
  {
    /** uuidv7, made by the appender: time-ordered, so the primary key index grows at its right edge */
    id: uuid('id').primaryKey(),
    /** one of the 18 types of spec 6 */
    type: text('type').notNull(),
    /** spec 6.1; unique, so a second append of one key is a no-op (spec 6 rule 3) */
    idempotencyKey: text('idempotency_key').notNull(),
    /** the payload as appended, amounts as decimal strings of base units */
    payload: jsonb('payload').notNull(),
    userId: uuid('user_id'),
    occurredAt: timestamp('occurred_at', { withTimezone: true }).notNull(),
    recordedAt: timestamp('recorded_at', { withTimezone: true }).notNull().defaultNow(),
    txId: xid8('tx_id').notNull().default(sql`pg_current_xact_id()`),
  },
  (t) => [
    uniqueIndex('ledger_events_idempotency_key_key').on(t.idempotencyKey),
    // the statement and the summary read one user's events in time order
    index('ledger_events_user_time_idx').on(t.userId, t.occurredAt, t.id).where(sql`${t.userId} is not null`),
  ],
)

export const ledgerPostings = pgTable(
  'ledger_postings',
  {
    /**
     * No foreign key: a statement trigger (0001_ledger.sql) checks, once per insert statement, that
     * every posting's event exists and was written by the same transaction. That is stronger (no
     * postings added to an old event) and cheaper than a per-row FK check with its KEY SHARE lock.
     */
    eventId: uuid('event_id').notNull(),
    /** built by @wh/ledger accounts.ts only (spec 2.4) */
    account: text('account').notNull(),
    currency: text('currency').notNull(),
    amount: numeric('amount', { precision: 78, scale: 0 }).notNull(),
  },
  // one netted posting per (account, currency) within an event; the key doubles as the event_id index
  (t) => [primaryKey({ name: 'ledger_postings_pkey', columns: [t.eventId, t.account, t.currency] })],
)

/**
 * Balance per (account, currency), kept in the transaction that writes the postings, so a read is
 * O(slots), never O(postings). `platform:` accounts are striped over several slots so concurrent
 * writers touching one hot account do not queue behind a single row lock; user accounts use slot 0.
 */
export const ledgerBalances = pgTable(
  'ledger_balances',
  {
    account: text('account').notNull(),
    currency: text('currency').notNull(),
    slot: smallint('slot').notNull(),
    /** the owner of a `user:` account, null for `platform:` accounts: per-user reads without LIKE */
    userId: uuid('user_id'),
    balance: numeric('balance', { precision: 78, scale: 0 }).notNull(),
  },
  (t) => [
    primaryKey({ name: 'ledger_balances_pkey', columns: [t.account, t.currency, t.slot] }),
    index('ledger_balances_user_idx').on(t.userId).where(sql`${t.userId} is not null`),
  ],
)

export type LedgerEventRow = typeof ledgerEvents.$inferSelect
export type LedgerPostingRow = typeof ledgerPostings.$inferSelect

/**
 * The balance check's sums (docs/solvency.md "Balances against postings"): per (account, currency),
 * the postings of every event written by a transaction below the last check's watermark.
 */
export const ledgerCheckSums = pgTable(
  'ledger_check_sums',
  {
    account: text('account').notNull(),
    currency: text('currency').notNull(),
    amount: numeric('amount', { precision: 78, scale: 0 }).notNull(),
  },
  (t) => [primaryKey({ name: 'ledger_check_sums_pkey', columns: [t.account, t.currency] })],
)

/** Each balance check: full or incremental, its watermark, what it compared and the differences it found. */
export const ledgerChecks = pgTable(
  'ledger_checks',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    kind: text('kind').notNull(),
    startedAt: timestamp('started_at', { withTimezone: true }).notNull().defaultNow(),
    durationMs: integer('duration_ms').notNull(),
    watermark: xid8('watermark').notNull(),
    events: bigint('events', { mode: 'number' }).notNull(),
    accounts: integer('accounts').notNull(),
    differenceCount: integer('difference_count').notNull(),
    differences: jsonb('differences').notNull(),
  },
  (t) => [index('ledger_checks_started_idx').on(t.startedAt)],
)
