import { drizzle, type PostgresJsDatabase } from 'drizzle-orm/postgres-js'
import postgres from 'postgres'
import * as schema from './schema'

export type Sql = postgres.Sql
export type Db = PostgresJsDatabase<typeof schema>

export interface Database {
  /** postgres.js, for the hot paths written as plain SQL */
  readonly sql: Sql
  /** drizzle over the same pool */
  readonly db: Db
  close(): Promise<void>
}

/**
 * Opens a pool. Built in main.ts (never at import time) and passed down.
 * numeric and int8 columns come back as strings; callers convert with BigInt().
 */
export function createDatabase(url: string, opts: { max?: number; appName?: string } = {}): Database {
  const sql = postgres(url, {
    max: opts.max ?? 10,
    onnotice: () => {},
    connection: { application_name: opts.appName ?? 'wheelhouse' },
  })
  // drizzle replaces the date serializers and parsers of the client it wraps (it maps
  // timestamps itself), which would break Date parameters in plain SQL: it gets its own pool.
  // postgres.js connects lazily, so an unused drizzle pool costs nothing.
  const drizzleSql = postgres(url, {
    max: Math.max(2, Math.ceil((opts.max ?? 10) / 4)),
    onnotice: () => {},
    connection: { application_name: `${opts.appName ?? 'wheelhouse'}-orm` },
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
