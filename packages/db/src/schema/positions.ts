import { sql } from 'drizzle-orm'
import {
  bigint,
  check,
  index,
  integer,
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
 * A user's option leg (docs/trading.md "Position states"): requested → funding → placing → open →
 * settled | closing → closed, or cancelled | failed. Amounts: `size`, `filled` and `strike` in e18
 * (the exchange's decimals for option amounts and prices); collateral and premium in base units of
 * their currency.
 */
export const positions = pgTable(
  'positions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id').notNull(),
    /** the underlying (ETH, BTC) */
    asset: text('asset').notNull(),
    /** 'put' | 'call' */
    side: text('side').notNull(),
    /** set when the wheel opened this leg */
    wheelId: uuid('wheel_id'),
    subaccountId: uuid('subaccount_id').notNull(),
    state: text('state').notNull(),
    /** USDC for a put, the underlying for a call */
    collateralCurrency: text('collateral_currency').notNull(),
    collateralAmount: numeric('collateral_amount', { precision: 78, scale: 0 }).notNull(),
    /** the part of the collateral funded from the free balance (a subaccount_transfers row) */
    fundingTransferId: uuid('funding_transfer_id'),
    instrument: text('instrument'),
    strikeE18: numeric('strike_e18', { precision: 78, scale: 0 }),
    expirySec: bigint('expiry_sec', { mode: 'number' }),
    sizeE18: numeric('size_e18', { precision: 78, scale: 0 }),
    filledE18: numeric('filled_e18', { precision: 78, scale: 0 }).notNull().default('0'),
    /** premium received, base units of USDC (before fees) */
    premium: numeric('premium', { precision: 78, scale: 0 }).notNull().default('0'),
    fees: numeric('fees', { precision: 78, scale: 0 }).notNull().default('0'),
    /** the option's implied volatility when the leg was sold (e18; the mark IV at the first order) */
    ivE18: numeric('iv_e18', { precision: 78, scale: 0 }),
    /** a wheel's leg: the settings its instrument was chosen with (docs/trading.md "Wheel settings") */
    legSettings: jsonb('leg_settings'),
    /** a buy-back (DELETE of an open leg): the highest price per unit accepted, from the quote (e18) */
    closeLimitE18: numeric('close_limit_e18', { precision: 78, scale: 0 }),
    /** amount bought back (e18) and what it cost in USDC base units (price × amount, fees apart) */
    boughtE18: numeric('bought_e18', { precision: 78, scale: 0 }).notNull().default('0'),
    closeCost: numeric('close_cost', { precision: 78, scale: 0 }).notNull().default('0'),
    /** the resting order while placing */
    orderId: text('order_id'),
    windowEndsAt: timestamp('window_ends_at', { withTimezone: true }),
    nextRepriceAt: timestamp('next_reprice_at', { withTimezone: true }),
    /** 'itm' | 'otm' once settled; the settlement cost in USDC base units */
    outcome: text('outcome'),
    settlementCost: numeric('settlement_cost', { precision: 78, scale: 0 }),
    /** DELETE /positions/:id asked to cancel the rest (placing) or buy the leg back (open) */
    cancelRequestedAt: timestamp('cancel_requested_at', { withTimezone: true }),
    /** why the position waits, failed or was cancelled */
    reason: text('reason'),
    idempotencyKey: varchar('idempotency_key', { length: 128 }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    closedAt: timestamp('closed_at', { withTimezone: true }),
  },
  (t) => [
    index('positions_user_created_idx').on(t.userId, t.createdAt),
    index('positions_live_idx')
      .on(t.state, t.updatedAt)
      .where(sql`${t.state} in ('requested', 'funding', 'placing', 'open', 'closing')`),
    index('positions_subaccount_idx').on(t.subaccountId, t.state),
    uniqueIndex('positions_user_idempotency_key')
      .on(t.userId, t.idempotencyKey)
      .where(sql`${t.idempotencyKey} is not null`),
  ],
)

/**
 * One fill of a position's orders, as recorded by `option_sold` (keyed by the trade id); a buy-back's
 * fill has a negative amount and premium. The platform's fee stays in the user's subaccount at the
 * exchange until the fee collection withdraws it to the platform's exchange wallet
 * (`fee_transfer_id`, then `fee_collected_at`); reconciliation counts what is not collected.
 */
export const positionFills = pgTable(
  'position_fills',
  {
    tradeId: text('trade_id').primaryKey(),
    positionId: uuid('position_id').notNull(),
    userId: uuid('user_id').notNull(),
    subaccountId: uuid('subaccount_id').notNull(),
    amountE18: numeric('amount_e18', { precision: 78, scale: 0 }).notNull(),
    priceE18: numeric('price_e18', { precision: 78, scale: 0 }).notNull(),
    premium: numeric('premium', { precision: 78, scale: 0 }).notNull(),
    exchangeFee: numeric('exchange_fee', { precision: 78, scale: 0 }).notNull(),
    platformFee: numeric('platform_fee', { precision: 78, scale: 0 }).notNull(),
    tradedAt: timestamp('traded_at', { withTimezone: true }).notNull(),
    feeCollectedAt: timestamp('fee_collected_at', { withTimezone: true }),
    /** the fee collection (a subaccount_transfers row, kind 'fee') that carries this fill's platform fee */
    feeTransferId: uuid('fee_transfer_id'),
  },
  (t) => [
    index('position_fills_position_idx').on(t.positionId),
    index('position_fills_uncollected_idx').on(t.subaccountId).where(sql`${t.feeCollectedAt} is null`),
  ],
)

export type PositionRow = typeof positions.$inferSelect
export type PositionFillRow = typeof positionFills.$inferSelect

/**
 * A user's wheel on one underlying (docs/trading.md "The wheel"): running → stopping (after the
 * current leg, or now: resting orders cancelled) → stopped. One wheel that is not stopped per user
 * and underlying. `currentPositionId` is its live leg; the runner opens the next one.
 */
export const wheels = pgTable(
  'wheels',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id').notNull(),
    asset: text('asset').notNull(),
    subaccountId: uuid('subaccount_id').notNull(),
    state: text('state').notNull(),
    /** 'after_cycle' | 'now' once a stop was asked */
    stopMode: text('stop_mode'),
    /** USD per unit of the underlying the wheel holds; a call is never sold below it (e18) */
    costBasisE18: numeric('cost_basis_e18', { precision: 78, scale: 0 }),
    /** what the wheel holds between legs: 'cash' (sells puts) or 'underlying' (sells calls) */
    holding: text('holding').notNull().default('cash'),
    currentPositionId: uuid('current_position_id'),
    cycles: bigint('cycles', { mode: 'number' }).notNull().default(0),
    /** why the runner skipped it last (deadline, pause, nothing to sell, …) */
    reason: text('reason'),
    lastAttemptAt: timestamp('last_attempt_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    stoppedAt: timestamp('stopped_at', { withTimezone: true }),
    /**
     * Per-wheel settings (docs/trading.md "Wheel settings"); NULL = the active profile's value.
     * 'delta' | 'otm': the strike by target |delta| or by distance from the index
     */
    strikeBy: text('strike_by'),
    putTargetDeltaBps: integer('put_target_delta_bps'),
    callTargetDeltaBps: integer('call_target_delta_bps'),
    /** the strike's distance from the index, basis points of the index (strikeBy 'otm') */
    otmBps: integer('otm_bps'),
    minTenorHours: integer('min_tenor_hours'),
    maxTenorDays: integer('max_tenor_days'),
    /** 'roll' (the next leg opens after an expiry) | 'settle' (the wheel stops after the expiry) */
    atExpiry: text('at_expiry'),
  },
  (t) => [
    check('wheels_strike_by_check', sql`${t.strikeBy} in ('delta', 'otm')`),
    check('wheels_at_expiry_check', sql`${t.atExpiry} in ('roll', 'settle')`),
    uniqueIndex('wheels_user_asset_active_key').on(t.userId, t.asset).where(sql`${t.state} <> 'stopped'`),
    index('wheels_active_idx').on(t.state).where(sql`${t.state} <> 'stopped'`),
  ],
)

export type WheelRow = typeof wheels.$inferSelect

/**
 * A conversion round (docs/trading.md "Conversions"): moves a wheel's subaccount between cash and
 * the underlying after (or, from PRE_CONVERT_LEAD_MINUTES before expiry, ahead of) an in-the-money
 * leg. planned → withdrawing (the sold currency leaves the subaccount for the exchange wallet) →
 * swapping (the swap ladder, @wh/swap, `swap_id`) → depositing (the bought currency into the
 * subaccount) → done | failed. One round per leg (`position_id`).
 */
export const conversions = pgTable(
  'conversions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    wheelId: uuid('wheel_id').notNull(),
    /** the leg whose outcome the round follows */
    positionId: uuid('position_id').notNull(),
    userId: uuid('user_id').notNull(),
    subaccountId: uuid('subaccount_id').notNull(),
    asset: text('asset').notNull(),
    /** 'to_underlying' (after a put) | 'to_cash' (after a call) */
    direction: text('direction').notNull(),
    /** 'pre_expiry' | 'after_settlement' */
    trigger: text('trigger').notNull(),
    state: text('state').notNull(),
    reason: text('reason'),
    sellCurrency: text('sell_currency').notNull(),
    buyCurrency: text('buy_currency').notNull(),
    amountIn: numeric('amount_in', { precision: 78, scale: 0 }),
    amountOut: numeric('amount_out', { precision: 78, scale: 0 }),
    outTransferId: uuid('out_transfer_id'),
    inTransferId: uuid('in_transfer_id'),
    swapId: uuid('swap_id'),
    alertedAt: timestamp('alerted_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    completedAt: timestamp('completed_at', { withTimezone: true }),
    ...retryColumns(),
  },
  (t) => [
    uniqueIndex('conversions_position_key').on(t.positionId),
    index('conversions_open_idx')
      .on(t.subaccountId)
      .where(sql`${t.state} in ('planned', 'withdrawing', 'swapping', 'depositing')`),
    index('conversions_due_idx')
      .on(t.nextAttemptAt)
      .where(sql`${t.state} in ('planned', 'withdrawing', 'swapping', 'depositing')`),
  ],
)

export type ConversionRow = typeof conversions.$inferSelect
