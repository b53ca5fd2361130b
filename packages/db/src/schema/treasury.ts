import { sql } from 'drizzle-orm'
import { check, jsonb, numeric, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core'

/**
 * The treasury's withdrawals on Derive v3 (docs/chains.md "Treasury"; migrations 0022, 0023): USDC paid out
 * on L1 from the funding subaccount to a hot wallet. Written only by
 * packages/treasury/src/treasury/store.ts. The signed action is stored before it is sent; at most one is open per chain.
 * States: signed → sent → paid | failed.
 */
export const treasuryWithdrawals = pgTable(
  'treasury_withdrawals',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    /** the chain whose hot wallet receives (ethereum: Derive v3 pays out on its L1) */
    chain: text('chain').notNull(),
    currency: text('currency').notNull(),
    /** withdrawn from the funding subaccount, in base units (the fee comes out of it) */
    amount: numeric('amount', { precision: 78, scale: 0 }).notNull(),
    state: text('state').notNull(),
    /** the signed private/withdraw params as sent (signature included; the nonce a decimal string) */
    params: jsonb('params').notNull(),
    /** the exchange's operation uuid */
    opUuid: text('op_uuid'),
    /** the L1 transaction that paid it (the settling batch's) */
    l1TxHash: text('l1_tx_hash'),
    /**
     * the outbox ids its settling L1 transaction paid or queued to the hot wallet (WithdrawalPaid /
     * WithdrawalEnqueued), stored once that is final; a queued rest is followed by these ids
     */
    outboxIds: text('outbox_ids').array(),
    /** what the exchange kept, in base units: amount − what arrived */
    fee: numeric('fee', { precision: 78, scale: 0 }),
    reason: text('reason'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('treasury_withdrawals_op_uuid_key').on(t.opUuid).where(sql`${t.opUuid} IS NOT NULL`),
    uniqueIndex('treasury_withdrawals_open_key').on(t.chain).where(sql`${t.state} IN ('signed', 'sent')`),
    check('treasury_withdrawals_state_check', sql`${t.state} IN ('signed', 'sent', 'paid', 'failed')`),
    check('treasury_withdrawals_amount_check', sql`${t.amount} > 0`),
  ],
)
