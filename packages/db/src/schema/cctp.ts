import { sql } from 'drizzle-orm'
import { check, integer, numeric, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core'

/**
 * The L2 route's transfers over Circle's CCTP (docs/chains.md "The L2 route"; migration 0032): USDC burned on the
 * source chain, attested by Circle, minted on the destination. Written only by packages/treasury/src/cctp/store.ts;
 * its legs are outbox rows (purposes cctp_burn and cctp_mint, refId the id). At most one is open per route.
 * States: burning → attesting → minting → done | failed.
 */
export const cctpTransfers = pgTable(
  'cctp_transfers',
  {
    id: uuid('id').primaryKey(),
    sourceChain: text('source_chain').notNull(),
    destChain: text('dest_chain').notNull(),
    /** sweep: an L2's surplus to L1; refill: L1 to an L2 short of its target */
    reason: text('reason').notNull(),
    /** burned, in USDC base units */
    amount: numeric('amount', { precision: 78, scale: 0 }).notNull(),
    /** the burn's maxFee: the most Circle may take at the mint */
    maxFee: numeric('max_fee', { precision: 78, scale: 0 }).notNull(),
    /** 1000 fast, 2000 standard */
    minFinality: integer('min_finality').notNull(),
    state: text('state').notNull(),
    burnTxHash: text('burn_tx_hash'),
    burnedAt: timestamp('burned_at', { withTimezone: true }),
    /** the attested message's nonce, the message and the attestation (hex) */
    nonce: text('nonce'),
    message: text('message'),
    attestation: text('attestation'),
    /** what Circle took at the mint (the attested message's feeExecuted), base units */
    feeExecuted: numeric('fee_executed', { precision: 78, scale: 0 }),
    mintTxHash: text('mint_tx_hash'),
    /** attestation reads so far, and when the next may be made (backoff) */
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }).notNull().defaultNow(),
    lastError: text('last_error'),
    /** when ops were told it is past CCTP's documented time (once) */
    lateAlertedAt: timestamp('late_alerted_at', { withTimezone: true }),
    /** what needs a person (a mint that reverted, an attestation that is not ours), told once */
    problem: text('problem'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    doneAt: timestamp('done_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('cctp_transfers_open_route_key')
      .on(t.sourceChain, t.destChain)
      .where(sql`${t.state} IN ('burning', 'attesting', 'minting')`),
    check('cctp_transfers_state_check', sql`${t.state} IN ('burning', 'attesting', 'minting', 'done', 'failed')`),
    check('cctp_transfers_reason_check', sql`${t.reason} IN ('sweep', 'refill')`),
    check('cctp_transfers_amount_check', sql`${t.amount} > 0`),
    check('cctp_transfers_fee_check', sql`${t.maxFee} >= 0 AND ${t.maxFee} < ${t.amount}`),
    check('cctp_transfers_finality_check', sql`${t.minFinality} IN (1000, 2000)`),
    check('cctp_transfers_route_check', sql`${t.sourceChain} <> ${t.destChain}`),
  ],
)
