import { sql } from 'drizzle-orm'
import { index, numeric, pgTable, smallint, text, timestamp, uniqueIndex, uuid, varchar } from 'drizzle-orm/pg-core'
import { holdColumns, retryColumns } from './retry'

/**
 * Withdrawals (spec 3.2, 4.2). 'requested' is the only ACTIVE state: such a row counts against
 * the user's free balance (transit minus requested withdrawals). One module writes it,
 * @wh/withdrawals (packages/withdrawals): a request is one INSERT by @wh/ledger reserveWithdrawal
 * (which locks the user's transit balance) with its chain, destination and idempotency key; the
 * later states (sent, failed) and the hold are the send's (docs/chains.md "Withdrawals").
 */
export const WITHDRAWAL_STATES = ['requested', 'sent', 'failed'] as const
export type WithdrawalState = (typeof WITHDRAWAL_STATES)[number]

export const withdrawals = pgTable(
  'withdrawals',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id').notNull(),
    state: text('state', { enum: WITHDRAWAL_STATES }).notNull(),
    /** the ledger currency (USDC, ETH) */
    currency: text('currency').notNull(),
    amount: numeric('amount', { precision: 78, scale: 0 }).notNull(),
    chain: text('chain'),
    destination: varchar('destination', { length: 42 }),
    /** network fee paid, base units of the chain's native asset */
    networkFee: numeric('network_fee', { precision: 78, scale: 0 }),
    txHash: varchar('tx_hash', { length: 66 }),
    /** the client's Idempotency-Key header: a retried request returns the same withdrawal */
    idempotencyKey: varchar('idempotency_key', { length: 128 }),
    failureReason: text('failure_reason'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    sentAt: timestamp('sent_at', { withTimezone: true }),
    /**
     * preparations that failed with an error nobody recognises while the chain answered its probe;
     * past WITHDRAWAL_SEND_ERRORS_MAX the withdrawal fails with a reason (docs/hostile-world.md)
     */
    sendErrors: smallint('send_errors').notNull().default(0),
    ...retryColumns(),
    ...holdColumns(),
  },
  (t) => [
    index('withdrawals_active_idx').on(t.userId, t.currency).where(sql`${t.state} = 'requested'`),
    uniqueIndex('withdrawals_user_idempotency_key')
      .on(t.userId, t.idempotencyKey)
      .where(sql`${t.idempotencyKey} is not null`),
    index('withdrawals_user_created_idx').on(t.userId, t.createdAt),
    index('withdrawals_state_idx').on(t.state, t.createdAt).where(sql`${t.state} <> 'sent'`),
    index('withdrawals_user_reverted_idx').on(t.userId, t.updatedAt).where(sql`${t.lastErrorCode} = 'REVERTED'`),
    index('withdrawals_due_idx').on(t.nextAttemptAt).where(sql`${t.state} = 'requested' and ${t.heldAt} is null`),
  ],
)

/** A withdrawals row, as every reader and writer of the table types it (@wh/withdrawals selects into it). */
export type WithdrawalRow = typeof withdrawals.$inferSelect
