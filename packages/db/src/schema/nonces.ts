import { index, pgTable, timestamp, varchar } from 'drizzle-orm/pg-core'

/**
 * spec 2.2: sign-in nonces. Rows accumulate (the spec has no cleanup); the
 * expires_at index exists for whoever adds one.
 */
export const siweNonces = pgTable(
  'siwe_nonces',
  {
    nonce: varchar('nonce', { length: 64 }).primaryKey(),
    issuedAt: timestamp('issued_at', { withTimezone: true }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    usedAt: timestamp('used_at', { withTimezone: true }),
  },
  (t) => [index('siwe_nonces_expires_at_idx').on(t.expiresAt)],
)
