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
 * numeric columns come back as strings; callers convert with BigInt().
 */
export function createDatabase(url: string, opts: { max?: number; appName?: string } = {}): Database {
  const sql = postgres(url, {
    max: opts.max ?? 10,
    onnotice: () => {},
    connection: { application_name: opts.appName ?? 'wheelhouse' },
    // timestamps as Date; bigint columns (int8) as BigInt
    types: { bigint: postgres.BigInt },
  })
  const db = drizzle(sql, { schema })
  return {
    sql,
    db,
    close: () => sql.end({ timeout: 5 }),
  }
}
