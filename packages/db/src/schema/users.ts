import { sql } from 'drizzle-orm'
import { integer, pgSequence, pgTable, timestamp, uuid, varchar } from 'drizzle-orm/pg-core'

/**
 * spec 2.1: hd_index comes from a dedicated sequence, never max+1, so concurrent
 * first sign-ins from different addresses never share an index.
 * Non-hardened BIP-32 child indexes stop at 2^31 - 1.
 */
export const usersHdIndexSeq = pgSequence('users_hd_index_seq', {
  startWith: 0,
  minValue: 0,
  maxValue: 2147483647,
  increment: 1,
  cache: 1,
})

export const users = pgTable('users', {
  id: uuid('id').primaryKey().defaultRandom(),
  /** EIP-55 checksum form (spec 2.1 rule 1) */
  walletAddress: varchar('wallet_address', { length: 42 }).notNull().unique('users_wallet_address_key'),
  hdIndex: integer('hd_index').notNull().unique('users_hd_index_key').default(sql`nextval('users_hd_index_seq')`),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  /** the chain id a contract account's sign-in was verified on (docs/architecture.md "Sign-in"); null: none */
  contractChainId: integer('contract_chain_id'),
})

export type User = typeof users.$inferSelect
