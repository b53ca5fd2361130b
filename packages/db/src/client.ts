import { drizzle, type PostgresJsDatabase } from 'drizzle-orm/postgres-js'
import postgres from 'postgres'
import * as schema from './schema'

export type Sql = postgres.Sql
/** The pool, or a transaction a caller opened with `sql.begin` (so a write commits with the caller's). */
export type Queryable = postgres.Sql | postgres.TransactionSql
export type Db = PostgresJsDatabase<typeof schema>

export interface Database {
  /** postgres.js, for the hot paths written as plain SQL */
  readonly sql: Sql
  /** drizzle over the same pool */
  readonly db: Db
  close(): Promise<void>
}

export interface DatabaseOptions {
  max?: number
  appName?: string
  /**
   * The longest a query waits before its connection tries the server again after failed
   * connections. postgres.js's own delay grows with every failure in the pool (3^n / 100 s, up to
   * 20 s), so under load a short outage becomes requests that hang for many seconds and a
   * recovery that lags the server by as much. A process that answers requests caps it (the API:
   * fail fast with a 503, serve again as soon as the server is back).
   */
  maxReconnectDelayMs?: number
}

/** postgres.js's reconnect delay (seconds, with jitter), capped at `maxMs`. */
export function cappedBackoff(maxMs: number): (retries: number) => number {
  return (retries) => (0.5 + Math.random() / 2) * Math.min(3 ** retries / 100, maxMs / 1000)
}

/**
 * Opens a pool. Built in main.ts (never at import time) and passed down.
 * numeric and int8 columns come back as strings; callers convert with BigInt().
 */
export function createDatabase(url: string, opts: DatabaseOptions = {}): Database {
  const backoff = opts.maxReconnectDelayMs === undefined ? {} : { backoff: cappedBackoff(opts.maxReconnectDelayMs) }
  const sql = postgres(url, {
    max: opts.max ?? 10,
    onnotice: () => {},
    connection: { application_name: opts.appName ?? 'wheelhouse' },
    ...backoff,
  })
  // drizzle replaces the date serializers and parsers of the client it wraps (it maps
  // timestamps itself), which would break Date parameters in plain SQL: it gets its own pool.
  // postgres.js connects lazily, so an unused drizzle pool costs nothing.
  const drizzleSql = postgres(url, {
    max: Math.max(2, Math.ceil((opts.max ?? 10) / 4)),
    onnotice: () => {},
    connection: { application_name: `${opts.appName ?? 'wheelhouse'}-orm` },
    ...backoff,
  })
  const db = drizzle(drizzleSql, { schema })
  return {
    sql,
    db,
    close: async () => {
      await Promise.all([sql.end({ timeout: 5 }), drizzleSql.end({ timeout: 5 })])
    },
  }
}
