/**
 * Candles in Postgres (table price_candles, packages/db/src/schema/market.ts): a batched upsert
 * that merges partial candles exactly like `mergeCandles`, and the bounded read of GET /:asset/chart.
 */
import type { Sql } from '@wh/db'
import type { Candle, CandleInterval } from './candles'

/** Rows per INSERT statement; a larger flush is split. */
export const CANDLE_UPSERT_BATCH_ROWS = 500
/** Candles one chart request may return. */
export const CHART_MAX_CANDLES = 1_000

/** Writes the candles, merging each into the stored candle of its bucket (one statement per batch). */
export async function upsertCandles(sql: Sql, candles: readonly Candle[]): Promise<void> {
  for (let i = 0; i < candles.length; i += CANDLE_UPSERT_BATCH_ROWS) {
    const rows = candles.slice(i, i + CANDLE_UPSERT_BATCH_ROWS).map((c) => ({
      asset: c.asset,
      interval: c.interval,
      bucket_start: new Date(c.bucketStartMs),
      open_e18: c.openE18.toString(),
      high_e18: c.highE18.toString(),
      low_e18: c.lowE18.toString(),
      close_e18: c.closeE18.toString(),
      tick_count: c.tickCount,
      first_tick_at: new Date(c.firstTickMs),
      last_tick_at: new Date(c.lastTickMs),
    }))
    // no alias on the table: postgres.js picks the helper's form (insert) from the words before it
    await sql`
      insert into price_candles ${sql(
        rows,
        'asset',
        'interval',
        'bucket_start',
        'open_e18',
        'high_e18',
        'low_e18',
        'close_e18',
        'tick_count',
        'first_tick_at',
        'last_tick_at',
      )}
      on conflict (asset, interval, bucket_start) do update set
        open_e18 = case when excluded.first_tick_at < price_candles.first_tick_at then excluded.open_e18 else price_candles.open_e18 end,
        high_e18 = greatest(price_candles.high_e18, excluded.high_e18),
        low_e18 = least(price_candles.low_e18, excluded.low_e18),
        close_e18 = case when excluded.last_tick_at >= price_candles.last_tick_at then excluded.close_e18 else price_candles.close_e18 end,
        tick_count = price_candles.tick_count + excluded.tick_count,
        first_tick_at = least(price_candles.first_tick_at, excluded.first_tick_at),
        last_tick_at = greatest(price_candles.last_tick_at, excluded.last_tick_at),
        updated_at = now()`
  }
}

interface CandleRow {
  bucket_start: Date
  open_e18: string
  high_e18: string
  low_e18: string
  close_e18: string
  tick_count: number
  first_tick_at: Date
  last_tick_at: Date
}

/** Candles of `asset` and `interval` whose bucket starts in [fromMs, toMs), oldest first, at most `limit`. */
export async function readCandles(
  sql: Sql,
  q: { asset: string; interval: CandleInterval; fromMs: number; toMs: number; limit?: number },
): Promise<Candle[]> {
  const limit = Math.min(q.limit ?? CHART_MAX_CANDLES, CHART_MAX_CANDLES)
  const rows = await sql<CandleRow[]>`
    select bucket_start, open_e18, high_e18, low_e18, close_e18, tick_count, first_tick_at, last_tick_at
    from price_candles
    where asset = ${q.asset} and interval = ${q.interval}
      and bucket_start >= ${new Date(q.fromMs)} and bucket_start < ${new Date(q.toMs)}
    order by bucket_start
    limit ${limit}`
  return rows.map((r) => ({
    asset: q.asset,
    interval: q.interval,
    bucketStartMs: r.bucket_start.getTime(),
    openE18: BigInt(r.open_e18),
    highE18: BigInt(r.high_e18),
    lowE18: BigInt(r.low_e18),
    closeE18: BigInt(r.close_e18),
    tickCount: r.tick_count,
    firstTickMs: r.first_tick_at.getTime(),
    lastTickMs: r.last_tick_at.getTime(),
  }))
}

/**
 * The close of the last 1m candle that started at or before `atMs` (the 24 h reference of
 * GET /assets); undefined when the feed holds nothing that old.
 */
export async function closeAt(sql: Sql, asset: string, atMs: number): Promise<bigint | undefined> {
  const rows = await sql<{ close_e18: string }[]>`
    select close_e18 from price_candles
    where asset = ${asset} and interval = '1m' and bucket_start <= ${new Date(atMs)}
    order by bucket_start desc
    limit 1`
  return rows[0] ? BigInt(rows[0].close_e18) : undefined
}
