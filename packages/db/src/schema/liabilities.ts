import {
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
 * The published proofs of liabilities (docs/solvency.md "Proof of liabilities"). Written and read
 * only by @wh/proof's store (packages/proof/src/store.ts): a root row and its tree's nodes and
 * leaves in one transaction, so a root is never visible half-written.
 */

const bytea = customType<{ data: Buffer }>({ dataType: () => 'bytea' })

/**
 * One row per publication, kept forever (the application may insert and read it, never change or
 * delete it: migration 0017).
 */
export const liabilityRoots = pgTable(
  'liability_roots',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    /** when it was published (the worker's clock) */
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    /** the Merkle-sum root's sha256 */
    root: bytea('root').notNull(),
    /** the tree's currency order (sorted) */
    currencies: text('currencies').array().notNull(),
    /** per currency, the sum of every leaf: decimal strings of base units */
    totals: jsonb('totals').notNull(),
    leafCount: integer('leaf_count').notNull(),
    /** the length of every path (levels below the root) */
    depth: smallint('depth').notNull(),
    /** the database's time of the snapshot the balances were read in */
    balancesAt: timestamp('balances_at', { withTimezone: true }).notNull(),
    /** pg_current_snapshot() of that read: which ledger transactions the balances include */
    ledgerSnapshot: text('ledger_snapshot').notNull(),
    /** the greatest ledger event id visible in that snapshot (null: an empty journal) */
    ledgerLastEventId: uuid('ledger_last_event_id'),
    /**
     * per currency, the users whose total was negative, counted as 0 in the tree:
     * `{ currency: { users, amount } }`, amount the (negative) sum in base units
     */
    negatives: jsonb('negatives').notNull(),
  },
  (t) => [
    uniqueIndex('liability_roots_root_key').on(t.root),
    index('liability_roots_created_idx').on(t.createdAt, t.id),
  ],
)

/**
 * Every node of a published tree, leaves (level 0) and padding included, so a user's path is one
 * primary-key read per level. May be deleted once the tree is old (the root stays).
 * No foreign key to the root: the store writes both in one transaction, and a per-row check would
 * cost a lookup on each of the hundreds of thousands of rows a tree has.
 */
export const liabilityTreeNodes = pgTable(
  'liability_tree_nodes',
  {
    rootId: uuid('root_id').notNull(),
    /** 0 = the leaves */
    level: smallint('level').notNull(),
    idx: integer('idx').notNull(),
    hash: bytea('hash').notNull(),
    /** per currency of the root, base units */
    sums: numeric('sums', { precision: 78, scale: 0 }).array().notNull(),
  },
  (t) => [primaryKey({ name: 'liability_tree_nodes_pkey', columns: [t.rootId, t.level, t.idx] })],
)

/** Each user's leaf of a published tree: where it sits and its salt (32 random bytes per user and tree). */
export const liabilityTreeLeaves = pgTable(
  'liability_tree_leaves',
  {
    rootId: uuid('root_id').notNull(),
    userId: uuid('user_id').notNull(),
    idx: integer('idx').notNull(),
    salt: bytea('salt').notNull(),
  },
  (t) => [primaryKey({ name: 'liability_tree_leaves_pkey', columns: [t.rootId, t.userId] })],
)
