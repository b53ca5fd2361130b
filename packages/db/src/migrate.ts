import { fileURLToPath } from 'node:url'
import { drizzle } from 'drizzle-orm/postgres-js'
import { migrate } from 'drizzle-orm/postgres-js/migrator'
import postgres from 'postgres'

/** drizzle/ at the repo root holds the SQL migrations made by drizzle-kit. */
export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../../drizzle', import.meta.url))

/**
 * The role migration 0014 creates: full DML on the service's tables, only SELECT and INSERT on
 * the journal. The API and the worker log in as a member of it (docs/architecture.md "Database access").
 */
export const APP_ROLE = 'wheelhouse_app'

/** Applies every pending migration; safe to run concurrently from several processes. Run it as the schema owner. */
export async function runMigrations(databaseUrl: string): Promise<void> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} })
  try {
    // one migrator at a time across processes
    await sql`select pg_advisory_lock(7243100001)`
    await migrate(drizzle(sql), { migrationsFolder: MIGRATIONS_FOLDER })
  } finally {
    await sql.end({ timeout: 5 })
  }
}

export interface AppLogin {
  /** DATABASE_URL's user */
  readonly user: string
  /** created now, as a login without a password (the URL named none) */
  readonly created: boolean
  /** the user is a superuser or owns the journal: membership of APP_ROLE takes none of its rights away */
  readonly privileged: boolean
}

/**
 * Makes the application's login (the user of `appUrl`, DATABASE_URL) a member of APP_ROLE,
 * connected as the owner (`ownerUrl`). A missing login is created only when `appUrl` carries no
 * password (a local cluster with trust authentication: the local run, the tests); a login with a
 * password is the operator's to create, so no password passes through here or the server's log.
 * Idempotent.
 */
export async function grantAppRole(ownerUrl: string, appUrl: string): Promise<AppLogin> {
  const url = new URL(appUrl)
  const user = decodeURIComponent(url.username)
  if (!user) throw new Error('DATABASE_URL names no user: the application must log in as a role of its own')
  const sql = postgres(ownerUrl, { max: 1, onnotice: () => {} })
  try {
    let created = false
    const [role] = await sql<{ rolsuper: boolean }[]>`select rolsuper from pg_roles where rolname = ${user}`
    if (!role) {
      if (url.password)
        throw new Error(
          `database role "${user}" (DATABASE_URL's user) does not exist: create it with its password ` +
            `(CREATE ROLE … LOGIN PASSWORD …) and run the migrations again`,
        )
      try {
        await sql`create role ${sql(user)} login`
        created = true
      } catch (e) {
        // another process created it first
        if ((e as { code?: string }).code !== '42710') throw e
      }
    }
    await sql`grant ${sql(APP_ROLE)} to ${sql(user)}`
    const [rights] = await sql<{ privileged: boolean }[]>`
      select r.rolsuper or pg_has_role(${user}, t.tableowner, 'USAGE') as privileged
      from pg_roles r, pg_tables t
      where r.rolname = ${user} and t.schemaname = 'public' and t.tablename = 'ledger_events'`
    return { user, created, privileged: rights?.privileged ?? false }
  } finally {
    await sql.end({ timeout: 5 })
  }
}
