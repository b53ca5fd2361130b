import { sql } from 'drizzle-orm'
import {
  bigint,
  index,
  integer,
  numeric,
  pgTable,
  smallint,
  text,
  timestamp,
  unique,
  uuid,
  varchar,
} from 'drizzle-orm/pg-core'

/**
 * Per chain, the next block the deposit watch will scan. It advances only in the transaction that
 * records the deposits of the blocks below it, and only to confirmed depth (spec 6.1 keys make a
 * replay harmless).
 */
export const chainCursors = pgTable('chain_cursors', {
  chain: text('chain').primaryKey(),
  nextBlock: bigint('next_block', { mode: 'bigint' }).notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
})

/**
 * Every user's deposit address, derived once (from hd_index) and kept, so the deposit watch
 * loads its lookup from here instead of re-deriving 100,000 keys on every start.
 */
export const depositAddresses = pgTable('deposit_addresses', {
  hdIndex: integer('hd_index').primaryKey(),
  /** EIP-55 */
  address: varchar('address', { length: 42 }).notNull().unique('deposit_addresses_address_key'),
  userId: uuid('user_id').notNull().unique('deposit_addresses_user_id_key'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
})

/** A transfer into a deposit address, from detection to sweep. */
export const deposits = pgTable(
  'deposits',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    chain: text('chain').notNull(),
    txHash: varchar('tx_hash', { length: 66 }).notNull(),
    logIndex: bigint('log_index', { mode: 'number' }).notNull(),
    blockNumber: bigint('block_number', { mode: 'bigint' }).notNull(),
    userId: uuid('user_id').notNull(),
    hdIndex: integer('hd_index').notNull(),
    address: varchar('address', { length: 42 }).notNull(),
    token: text('token').notNull(),
    amount: numeric('amount', { precision: 78, scale: 0 }).notNull(),
    /** detected → sweeping → swept */
    state: text('state').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    unique('deposits_chain_tx_log_key').on(t.chain, t.txHash, t.logIndex),
    index('deposits_pending_idx').on(t.state, t.createdAt).where(sql`${t.state} <> 'swept'`),
  ],
)

/**
 * The crash-safe outbox of transactions the service sends itself (gas top-ups, sweeps,
 * withdrawals, bridge legs). A row holds the nonce, the raw signed transaction and its hash
 * BEFORE the broadcast; a restarted worker re-broadcasts or confirms that same transaction
 * and never builds a second one for the same (purpose, ref_id, step).
 */
export const outboundTxs = pgTable(
  'outbound_txs',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    chain: text('chain').notNull(),
    /** gas_topup | sweep | withdrawal | bridge */
    purpose: text('purpose').notNull(),
    /** the business row it serves (deposit id, withdrawal id, …) */
    refId: text('ref_id').notNull(),
    /** several transactions for one ref (a gas top-up, then the sweep) */
    step: smallint('step').notNull().default(0),
    fromAddress: varchar('from_address', { length: 42 }).notNull(),
    toAddress: varchar('to_address', { length: 42 }).notNull(),
    token: text('token').notNull(),
    amount: numeric('amount', { precision: 78, scale: 0 }).notNull(),
    nonce: bigint('nonce', { mode: 'number' }).notNull(),
    rawTx: text('raw_tx').notNull(),
    txHash: varchar('tx_hash', { length: 66 }).notNull(),
    /** signed → broadcast → confirmed | failed */
    state: text('state').notNull(),
    gasUsed: numeric('gas_used', { precision: 78, scale: 0 }),
    effectiveGasPrice: numeric('effective_gas_price', { precision: 78, scale: 0 }),
    blockNumber: bigint('block_number', { mode: 'bigint' }),
    error: text('error'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    unique('outbound_txs_purpose_ref_step_key').on(t.purpose, t.refId, t.step),
    unique('outbound_txs_chain_from_nonce_key').on(t.chain, t.fromAddress, t.nonce),
    index('outbound_txs_open_idx').on(t.state, t.createdAt).where(sql`${t.state} in ('signed', 'broadcast')`),
  ],
)
