import { sql } from 'drizzle-orm'
import {
  bigint,
  boolean,
  index,
  integer,
  numeric,
  pgTable,
  primaryKey,
  smallint,
  text,
  timestamp,
  unique,
  uuid,
  varchar,
} from 'drizzle-orm/pg-core'
import { holdColumns, retryColumns } from './retry'

/**
 * Per chain, the next block the deposit watch will scan. It advances only in the transaction that
 * records the deposits of the blocks below it, and only to confirmed depth (spec 6.1 keys make a
 * replay harmless).
 */
export const chainCursors = pgTable('chain_cursors', {
  chain: text('chain').primaryKey(),
  nextBlock: bigint('next_block', { mode: 'bigint' }).notNull(),
  /** the hash of block next_block − 1 as scanned: a later answer with another hash is a reorg past the cursor */
  blockHash: varchar('block_hash', { length: 66 }),
  /** set when crediting on this chain stopped (a reorg past the cursor) until an operator resumes it */
  haltedAt: timestamp('halted_at', { withTimezone: true }),
  haltReason: text('halt_reason'),
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
    /** detected → sweeping → swept; failed (an operator retries: retry) */
    state: text('state').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    ...retryColumns(),
    ...holdColumns(),
  },
  (t) => [
    unique('deposits_chain_tx_log_key').on(t.chain, t.txHash, t.logIndex),
    index('deposits_pending_idx').on(t.state, t.createdAt).where(sql`${t.state} <> 'swept'`),
    index('deposits_due_idx')
      .on(t.nextAttemptAt)
      .where(sql`${t.state} in ('detected', 'sweeping', 'retry') and ${t.heldAt} is null`),
    // the deposit audit: an address's credited deposits, and the addresses with recent ones
    index('deposits_chain_address_idx').on(t.chain, t.address),
    index('deposits_chain_block_idx').on(t.chain, t.blockNumber),
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
    /**
     * signed → broadcast → confirmed | failed; held when the chain's answers contradict each other
     * (the nonce is used at confirmed depth, yet no version of the transaction has a receipt): an
     * operator decides, nothing is released meanwhile (docs/hostile-world.md)
     */
    state: text('state').notNull(),
    gasUsed: numeric('gas_used', { precision: 78, scale: 0 }),
    effectiveGasPrice: numeric('effective_gas_price', { precision: 78, scale: 0 }),
    blockNumber: bigint('block_number', { mode: 'bigint' }),
    error: text('error'),
    /** consecutive readings where the nonce was used at confirmed depth and no version had a receipt */
    contradictions: smallint('contradictions').notNull().default(0),
    firstContradictionAt: timestamp('first_contradiction_at', { withTimezone: true }),
    holdReason: text('hold_reason'),
    /**
     * broadcasts refused with an unknown error while the chain answered its probe; past a bound the
     * nonce is filled by a no-op version (docs/hostile-world.md "One policy for every outbound transaction")
     */
    refusals: smallint('refusals').notNull().default(0),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    unique('outbound_txs_purpose_ref_step_key').on(t.purpose, t.refId, t.step),
    unique('outbound_txs_chain_from_nonce_key').on(t.chain, t.fromAddress, t.nonce),
    index('outbound_txs_open_idx').on(t.state, t.createdAt).where(sql`${t.state} in ('signed', 'broadcast')`),
    // the deposit audit: top-ups an address received, and the addresses with recent transactions
    index('outbound_txs_topup_to_idx').on(t.chain, t.toAddress).where(sql`${t.purpose} = 'gas_topup'`),
    index('outbound_txs_mined_block_idx').on(t.chain, t.blockNumber).where(sql`${t.blockNumber} is not null`),
  ],
)

/**
 * Every signed version of an outbound transaction: version 0 is the first signature, each later one
 * a replacement with the same nonce and higher fees (a transaction not mined within its bound).
 * Stored before it is broadcast, so after a crash every transaction that may be on the network is
 * known, and whichever version is mined is found by its hash. The parent row's raw_tx and tx_hash
 * are the newest version until one is mined, then the mined one. Fees are read from the raw bytes.
 */
export const outboundTxVersions = pgTable(
  'outbound_tx_versions',
  {
    outboundId: uuid('outbound_id').notNull(),
    version: smallint('version').notNull(),
    rawTx: text('raw_tx').notNull(),
    txHash: varchar('tx_hash', { length: 66 }).notNull(),
    /**
     * a no-op (0-value transfer to the sender itself) at the row's nonce, signed when the node
     * refused the row's bytes for good: mined, it fails the row and closes the nonce gap
     */
    fillsNonce: boolean('fills_nonce').notNull().default(false),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.outboundId, t.version] }), unique('outbound_tx_versions_tx_hash_key').on(t.txHash)],
)

/**
 * The platform's own addresses (hot, gas, swap wallets and the exchange wallet), registered by the
 * worker at start from the keys it holds. The API reads them to refuse a withdrawal to one of them
 * (it holds no key to derive them itself); solvency reads them as the places assets sit.
 */
export const platformWallets = pgTable('platform_wallets', {
  /** EIP-55 */
  address: varchar('address', { length: 42 }).primaryKey(),
  /** hot | gas | swap | exchange */
  role: text('role').notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
})
