import { sql } from 'drizzle-orm'
import { index, integer, numeric, pgTable, smallint, text, timestamp, uuid, varchar } from 'drizzle-orm/pg-core'

/**
 * One swap the ladder executor works on (docs/swaps.md), keyed by the caller's id, and how far it
 * got: a restarted worker reads `run` and `step` and resumes the transaction of that step (the
 * outbox row `swap` / `{id}:{run}` / `{step}`) instead of sending a new swap on top of it.
 *
 * state: running → executed | exhausted | deadline | refused_sanity | refused_gas; a retry of a
 * non-executed swap starts run + 1, or, once `first_attempt_at` is older than
 * SWAP_RETRY_STALE_AFTER_MS, ends in abandoned (with an alert).
 */
export const swaps = pgTable(
  'swaps',
  {
    id: uuid('id').primaryKey(),
    userId: uuid('user_id').notNull(),
    subaccountId: text('subaccount_id').notNull(),
    chain: text('chain').notNull(),
    /** ledger currencies (USDC, ETH, …) */
    sellCurrency: text('sell_currency').notNull(),
    buyCurrency: text('buy_currency').notNull(),
    amountIn: numeric('amount_in', { precision: 78, scale: 0 }).notNull(),
    /** index price of the current run: whole buy units per whole sell unit, as num / den */
    indexPriceNum: numeric('index_price_num', { precision: 78, scale: 0 }).notNull(),
    indexPriceDen: numeric('index_price_den', { precision: 78, scale: 0 }).notNull(),
    state: text('state').notNull(),
    /** ladder runs started (a retry after deadline or exhaustion is a new run), from 0 */
    run: integer('run').notNull().default(0),
    /** index into EPSILON_LADDER_BPS of the step in flight or next */
    step: smallint('step').notNull().default(0),
    runStartedAt: timestamp('run_started_at', { withTimezone: true }).notNull(),
    firstAttemptAt: timestamp('first_attempt_at', { withTimezone: true }).notNull(),
    /** the executed transaction and what the receipt's Transfer logs moved */
    txHash: varchar('tx_hash', { length: 66 }),
    sellAmount: numeric('sell_amount', { precision: 78, scale: 0 }),
    buyAmount: numeric('buy_amount', { precision: 78, scale: 0 }),
    lastError: text('last_error'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('swaps_running_idx').on(t.state, t.runStartedAt).where(sql`${t.state} = 'running'`),
    index('swaps_user_idx').on(t.userId, t.createdAt),
  ],
)

export type SwapRow = typeof swaps.$inferSelect
