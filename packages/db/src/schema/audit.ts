import { sql } from 'drizzle-orm'
import {
  bigint,
  index,
  integer,
  numeric,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
  varchar,
} from 'drizzle-orm/pg-core'

/**
 * The deposit audit's place in each chain (docs/chains.md "Every deposit is accounted for"): the
 * rotation over deposit_addresses (every address is read within ⌈addresses / batch⌉ ticks) and the
 * block up to which recent activity (deposits, outbound transactions) was already audited.
 */
export const depositAuditCursors = pgTable('deposit_audit_cursors', {
  chain: text('chain').primaryKey(),
  /** the rotation reads deposit_addresses from this hd_index on */
  nextHdIndex: integer('next_hd_index').notNull().default(0),
  /** activity in blocks at or below this one was read by an earlier tick */
  activityBlock: bigint('activity_block', { mode: 'bigint' }).notNull(),
  /** full rotations completed, and when the current one began */
  rotations: integer('rotations').notNull().default(0),
  rotationStartedAt: timestamp('rotation_started_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
})

/**
 * The last reading of each deposit address: its balance on chain and what the platform expected
 * at that block, and the last block at which nothing was unexplained (where a trace for a later
 * surplus starts).
 */
export const depositBalanceAudits = pgTable(
  'deposit_balance_audits',
  {
    chain: text('chain').notNull(),
    /** as in deposit_addresses */
    address: varchar('address', { length: 42 }).notNull(),
    checkedBlock: bigint('checked_block', { mode: 'bigint' }).notNull(),
    checkedAt: timestamp('checked_at', { withTimezone: true }).notNull(),
    balance: numeric('balance', { precision: 78, scale: 0 }).notNull(),
    expected: numeric('expected', { precision: 78, scale: 0 }).notNull(),
    /** the last reading without a surplus (null: none yet) */
    cleanBlock: bigint('clean_block', { mode: 'bigint' }),
  },
  (t) => [primaryKey({ columns: [t.chain, t.address] })],
)

/**
 * ETH at a deposit address above what the platform expects (by at least the registry's minimum
 * ETH deposit): one row per episode, from the first reading that saw it to its end.
 * open → credited (the traces explained it and the transfers are deposits now) | resolved (a
 * later reading no longer saw it). An open row is where uncredited ETH sits, for an operator and
 * a solvency run.
 */
export const depositSurpluses = pgTable(
  'deposit_surpluses',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    chain: text('chain').notNull(),
    address: varchar('address', { length: 42 }).notNull(),
    hdIndex: integer('hd_index').notNull(),
    userId: uuid('user_id').notNull(),
    /** the unexplained surplus at the last reading, wei */
    amount: numeric('amount', { precision: 78, scale: 0 }).notNull(),
    /** what the audit credited as deposits during this episode, wei */
    creditedAmount: numeric('credited_amount', { precision: 78, scale: 0 }).notNull().default('0'),
    /** readings that saw it (it is acted on from the second) */
    readings: integer('readings').notNull().default(1),
    firstSeenBlock: bigint('first_seen_block', { mode: 'bigint' }).notNull(),
    firstSeenAt: timestamp('first_seen_at', { withTimezone: true }).notNull(),
    lastSeenBlock: bigint('last_seen_block', { mode: 'bigint' }).notNull(),
    lastSeenAt: timestamp('last_seen_at', { withTimezone: true }).notNull(),
    /** the traces of this episode start here (the block after the last clean reading) */
    traceFromBlock: bigint('trace_from_block', { mode: 'bigint' }).notNull(),
    /** blocks up to this one were traced (null: not yet) */
    tracedToBlock: bigint('traced_to_block', { mode: 'bigint' }),
    /** open | credited | resolved */
    state: text('state').notNull(),
    /** why it is not explained: 'no-trace-api' | 'not-in-traces' | 'trace-failed' */
    reason: text('reason'),
    alertedAt: timestamp('alerted_at', { withTimezone: true }),
    closedAt: timestamp('closed_at', { withTimezone: true }),
  },
  (t) => [
    // one open episode per address
    uniqueIndex('deposit_surpluses_open_key').on(t.chain, t.address).where(sql`${t.state} = 'open'`),
    index('deposit_surpluses_address_idx').on(t.chain, t.address, t.firstSeenBlock),
  ],
)
