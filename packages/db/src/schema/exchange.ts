import { sql } from 'drizzle-orm'
import {
  bigint,
  index,
  jsonb,
  numeric,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
  uuid,
  varchar,
} from 'drizzle-orm/pg-core'
import { retryColumns } from './retry'

/**
 * A user's subaccount at the exchange, one per (user, asset), created on first need (docs/exchange.md
 * "Subaccounts"). `exchangeId` is Derive's subaccount id, known once the creating deposit settled;
 * ledger accounts userSub(u, exchangeId, currency) and the accrual/reconcile keys use it.
 * A stop (reconciliation, an operator) blocks trading and funding until cleared.
 */
export const subaccounts = pgTable(
  'subaccounts',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id').notNull(),
    /** the underlying the subaccount trades (ETH, BTC) */
    asset: text('asset').notNull(),
    exchangeId: bigint('exchange_id', { mode: 'bigint' }),
    /** set while a stop is raised (stop_raised without a later stop_cleared) */
    stoppedAt: timestamp('stopped_at', { withTimezone: true }),
    stopReason: text('stop_reason'),
    /** accrual histories are read from here on (ms); buckets make a re-read harmless anyway */
    accruedToMs: bigint('accrued_to_ms', { mode: 'bigint' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('subaccounts_user_asset_key').on(t.userId, t.asset),
    uniqueIndex('subaccounts_exchange_id_key').on(t.exchangeId).where(sql`${t.exchangeId} is not null`),
  ],
)

/**
 * A release requested through POST /subaccounts/:asset/release. Its legs (one per currency the
 * subaccount holds) are subaccount_transfers rows; its state says why it waits or failed.
 */
export const subaccountReleases = pgTable(
  'subaccount_releases',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id').notNull(),
    subaccountId: uuid('subaccount_id').notNull(),
    /** requested → waiting (reason) → withdrawing → released | failed (reason) */
    state: text('state').notNull(),
    reason: text('reason'),
    idempotencyKey: varchar('idempotency_key', { length: 128 }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    completedAt: timestamp('completed_at', { withTimezone: true }),
    ...retryColumns(),
  },
  (t) => [
    index('subaccount_releases_open_idx')
      .on(t.createdAt)
      .where(sql`${t.state} in ('requested', 'waiting', 'withdrawing')`),
    index('subaccount_releases_due_idx')
      .on(t.nextAttemptAt)
      .where(sql`${t.state} in ('requested', 'waiting', 'withdrawing')`),
    index('subaccount_releases_user_idx').on(t.userId, t.createdAt),
    uniqueIndex('subaccount_releases_user_idempotency_key')
      .on(t.userId, t.idempotencyKey)
      .where(sql`${t.idempotencyKey} is not null`),
  ],
)

/**
 * One movement between the platform's exchange wallet and a subaccount: a funding (deposit) or a
 * release leg (withdrawal). Crash-safe like the chain outbox: the signed action is stored before
 * it is sent, so a restarted worker re-sends or finds that same action, never a second one.
 *
 * Funding states: reserved (counts against the free balance) → submitted (signed params stored)
 * → accepted (exchange transaction id known) → funded (settled; subaccount_funded recorded)
 * | failed (the reservation is released). Release legs: submitted → accepted → released | failed.
 */
export const subaccountTransfers = pgTable(
  'subaccount_transfers',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id').notNull(),
    subaccountId: uuid('subaccount_id').notNull(),
    kind: text('kind').notNull(),
    releaseId: uuid('release_id'),
    state: text('state').notNull(),
    /** the ledger currency (USDC, ETH) */
    currency: text('currency').notNull(),
    amount: numeric('amount', { precision: 78, scale: 0 }).notNull(),
    /** 'private/deposit', 'private/create_subaccount' or 'private/withdraw' */
    method: text('method'),
    /** the signed action's params as sent (signature included; never returned by the API) */
    params: jsonb('params'),
    nonce: bigint('nonce', { mode: 'bigint' }),
    transactionId: text('transaction_id'),
    reason: text('reason'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    submittedAt: timestamp('submitted_at', { withTimezone: true }),
    completedAt: timestamp('completed_at', { withTimezone: true }),
    ...retryColumns(),
  },
  (t) => [
    uniqueIndex('subaccount_transfers_transaction_id_key')
      .on(t.transactionId)
      .where(sql`${t.transactionId} is not null`),
    index('subaccount_transfers_open_idx')
      .on(t.kind, t.createdAt)
      .where(sql`${t.state} in ('reserved', 'submitted', 'accepted')`),
    index('subaccount_transfers_due_idx')
      .on(t.kind, t.nextAttemptAt)
      .where(sql`${t.state} in ('reserved', 'submitted', 'accepted')`),
    index('subaccount_transfers_in_flight_idx')
      .on(t.userId, t.currency)
      .where(sql`${t.kind} = 'fund' and ${t.state} in ('reserved', 'submitted', 'accepted')`),
    index('subaccount_transfers_subaccount_idx').on(t.subaccountId, t.createdAt),
  ],
)

// no inferred row types for subaccounts and subaccount_transfers: their owner, @wh/subaccounts, types
// the rows as its SQL returns them (`TransferRow`: snake_case, amounts as text), the one source
export type SubaccountReleaseRow = typeof subaccountReleases.$inferSelect
