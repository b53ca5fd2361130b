/**
 * `pnpm db:migrate`: applies the migrations as the schema owner, then makes the application's
 * login a member of the application role (docs/architecture.md "Database access").
 *
 * DATABASE_OWNER_URL is the owner's connection (migrations only; never given to the API or the
 * worker); DATABASE_URL the application's. Without DATABASE_OWNER_URL the migrations run as
 * DATABASE_URL's user, as before, and the application keeps the owner's rights.
 * Both from the environment or .env.local.
 */
import { loadDotEnvLocal, processEnv } from '@wh/config'
import { APP_ROLE, grantAppRole, runMigrations } from './migrate'

loadDotEnvLocal()
const env = processEnv()
const appUrl = env.DATABASE_URL
const ownerUrl = env.DATABASE_OWNER_URL || appUrl
if (!appUrl || !ownerUrl) {
  console.error('DATABASE_URL is required (set it, or run the local stack once to write .env.local)')
  process.exit(1)
}
const userOf = (u: string) => {
  try {
    return decodeURIComponent(new URL(u).username)
  } catch {
    console.error('DATABASE_URL and DATABASE_OWNER_URL must be postgres:// URLs')
    process.exit(1)
  }
}
await runMigrations(ownerUrl)
console.log('migrations applied')
if (userOf(ownerUrl) === userOf(appUrl)) {
  console.log(
    `note: the application connects as the schema owner; set DATABASE_OWNER_URL to the owner's URL and DATABASE_URL to a login of its own to run it as ${APP_ROLE}`,
  )
} else {
  try {
    const login = await grantAppRole(ownerUrl, appUrl)
    console.log(`database role ${login.user}${login.created ? ' created,' : ''} member of ${APP_ROLE}`)
    if (login.privileged)
      console.warn(
        `warning: ${login.user} is a superuser or owns the tables: it keeps every right, ${APP_ROLE} restricts nothing`,
      )
  } catch (e) {
    console.error((e as Error).message)
    process.exit(1)
  }
}
