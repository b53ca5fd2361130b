import { type Config, loadConfig } from '@wh/config'
import { createDatabase, type Database } from '@wh/db'
import { inject } from 'vitest'
import { cloneTemplate } from './database'
import { testEnv } from './env'

declare module 'vitest' {
  export interface ProvidedContext {
    /** the integration suite's Postgres (global-setup.ts) */
    pgAdminUrl: string
    redisUrl: string
  }
}

/**
 * For an integration test file: a fresh migrated database, the shared Redis,
 * and a Config pointing at both.
 */
export async function integrationContext(overrides: Record<string, string | undefined> = {}): Promise<{
  config: Config
  database: Database
  env: Record<string, string | undefined>
}> {
  const databaseUrl = await cloneTemplate(inject('pgAdminUrl'))
  const env = testEnv({ DATABASE_URL: databaseUrl, CACHE_URL: inject('redisUrl'), ...overrides })
  const config = loadConfig(env)
  const database = createDatabase(databaseUrl, { max: 20 })
  return { config, database, env }
}
