import { sql } from 'drizzle-orm'
import { check, integer, numeric, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core'

/**
 * Index-price candles per asset and interval (1m, 5m, 1h, 1d), written by the worker's price feed
 * as ticks arrive (batched upserts that merge a partial candle into a stored one), read by
 * GET /:asset/chart, which never calls the exchange (docs/market-data.md). Prices are e18 integers
 * (Derive's working unit), numeric(78,0) like every amount: no float.
 */
export const priceCandles = pgTable(
  'price_candles',
  {
    asset: text('asset').notNull(),
    /** '1m' | '5m' | '1h' | '1d' */
    interval: text('interval').notNull(),
    /** the bucket's start, aligned to the interval in UTC */
    bucketStart: timestamp('bucket_start', { withTimezone: true }).notNull(),
    openE18: numeric('open_e18', { precision: 78, scale: 0 }).notNull(),
    highE18: numeric('high_e18', { precision: 78, scale: 0 }).notNull(),
    lowE18: numeric('low_e18', { precision: 78, scale: 0 }).notNull(),
    closeE18: numeric('close_e18', { precision: 78, scale: 0 }).notNull(),
    /** ticks folded in (a merge adds the counts) */
    tickCount: integer('tick_count').notNull(),
    /** exchange time of the first and last tick folded in: a merge keeps the earlier open, the later close */
    firstTickAt: timestamp('first_tick_at', { withTimezone: true }).notNull(),
    lastTickAt: timestamp('last_tick_at', { withTimezone: true }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: 'price_candles_pk', columns: [t.asset, t.interval, t.bucketStart] }),
    check('price_candles_interval_check', sql`${t.interval} in ('1m', '5m', '1h', '1d')`),
    check('price_candles_range_check', sql`${t.lowE18} <= ${t.highE18} and ${t.lowE18} > 0`),
  ],
)
