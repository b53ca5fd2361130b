/**
 * Ops entry point for held transactions (packages/ops/src/held.ts, docs/hostile-world.md "Never pay twice"):
 *
 *   pnpm --filter @wh/worker exec tsx src/cli/held.ts --list
 *   pnpm --filter @wh/worker exec tsx src/cli/held.ts <outbound id> --recheck --reason "<evidence>"
 *   pnpm --filter @wh/worker exec tsx src/cli/held.ts <outbound id> --failed --reason "<evidence>"
 *
 * `--by <name>` names the operator (default: the OS user); the decision is kept in operator_actions.
 * Reads the same environment as the worker; prints one JSON line and nothing of the configuration.
 * Exit code 0 on success, 1 when refused (not held, not found), 2 on bad usage.
 */
import { loadConfigOrExit, loadDotEnvLocal, processEnv } from '@wh/config'
import { AppError } from '@wh/core'
import { createDatabase } from '@wh/db'
import { listHeld, resolveHeld } from '@wh/ops'
import { parseCli, usageError } from './args'

const USAGE = 'usage: held.ts --list | held.ts <outbound id> (--recheck | --failed) --reason "<evidence>"'
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

function usage(message: string): never {
  return usageError(USAGE, message)
}

const { values, positionals } = parseCli(USAGE, {
  allowPositionals: true,
  options: {
    list: { type: 'boolean', default: false },
    recheck: { type: 'boolean', default: false },
    failed: { type: 'boolean', default: false },
    reason: { type: 'string' },
    by: { type: 'string' },
  },
})

loadDotEnvLocal()
const config = loadConfigOrExit(processEnv)
const database = createDatabase(config.databaseUrl, { max: 2, appName: 'wheelhouse-held' })
let code = 0
try {
  if (values.list) {
    console.log(JSON.stringify({ held: await listHeld(database.sql) }))
  } else {
    const [id] = positionals
    if (!id || positionals.length !== 1 || !UUID.test(id)) usage('one outbound transaction id is required')
    if (values.recheck === values.failed) usage('say --recheck or --failed')
    if (!values.reason?.trim()) usage('--reason is required: say what evidence decided it')
    const record = await resolveHeld(database.sql, id, values.failed ? 'failed' : 'recheck', values.reason, values.by)
    console.log(JSON.stringify({ id: record.id, state: record.state, txHash: record.txHash }))
  }
} catch (e) {
  if (!(e instanceof AppError)) throw e
  console.log(JSON.stringify({ error: e.code, message: e.message }))
  code = 1
} finally {
  await database.close()
}
process.exit(code)
