// `pnpm db:migrate`: applies the migrations to DATABASE_URL (from the environment or .env.local).
import { loadDotEnvLocal, processEnv } from '@wh/config'
import { runMigrations } from './migrate'

loadDotEnvLocal()
const url = processEnv().DATABASE_URL
if (!url) {
  console.error('DATABASE_URL is required (set it, or run the local stack once to write .env.local)')
  process.exit(1)
}
await runMigrations(url)
console.log('migrations applied')
