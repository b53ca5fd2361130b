import { type Config, loadConfig } from '@wh/config'
import { createDatabase, type Database } from '@wh/db'
import { inject } from 'vitest'
import { APP_LOGIN, cloneTemplate, withUser } from './database'
import { testEnv } from './env'

declare module 'vitest' {
  export interface ProvidedContext {
    /** the integration suite's Postgres (global-setup.ts) */
    pgAdminUrl: string
    redisUrl: string
  }
}

/**
 * For an integration test file: a fresh migrated database, the shared Redis, and a Config pointing
 * at both. `database` and DATABASE_URL connect as the application's login (APP_LOGIN), with the
 * rights the service has in production; `ownerUrl` is the same database as its owner, for a test
 * that must write what the application may not (the journal's own guards, DDL).
 */
export async function integrationContext(overrides: Record<string, string | undefined> = {}): Promise<{
  config: Config
  database: Database
  env: Record<string, string | undefined>
  ownerUrl: string
}> {
  const ownerUrl = await cloneTemplate(inject('pgAdminUrl'))
  const databaseUrl = withUser(ownerUrl, APP_LOGIN)
  const env = testEnv({ DATABASE_URL: databaseUrl, CACHE_URL: inject('redisUrl'), ...overrides })
  const config = loadConfig(env)
  const database = createDatabase(databaseUrl, { max: 20 })
  return { config, database, env, ownerUrl }
}
