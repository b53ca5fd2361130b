/**
 * Ops entry point for stops (docs/exchange.md "Stops and clearing"): lists stopped subaccounts, or
 * proposes to clear one stop once the divergence behind it is explained. Clearing lets money move
 * again, so it takes four eyes: it takes effect once other approvers approved the proposal
 * (cli/proposals.ts, docs/operations.md "Approvals"), and then appends `stop_cleared` and clears
 * `stopped_at` in one transaction (packages/ops/src/subaccount-stops.ts `clearStopIn`).
 *
 *   pnpm --filter @wh/worker exec tsx src/cli/clear-stop.ts --list
 *   pnpm --filter @wh/worker exec tsx src/cli/clear-stop.ts <subaccount> --reason "<why it is safe>" --operator <name>
 *
 * `<subaccount>` is the subaccounts row id (uuid) or Derive's subaccount id (digits). The operator
 * signs in with their password on standard input (cli/operator.ts). Reads the same environment as
 * the worker (.env.local filled in); prints one JSON line and nothing of the configuration. Exit
 * code 0 on success, 1 when refused (not stopped, a wrong password), 2 on bad usage.
 */
import { loadConfigOrExit, loadDotEnvLocal, processEnv } from '@wh/config'
import { AppError, systemClock } from '@wh/core'
import { createDatabase, type Sql } from '@wh/db'
import { propose } from '@wh/ops'
import { buildChainClients, buildChainRegistry, configuredChainOverrides } from '@wh/wallet'
import { parseCli, UUID, usageError } from './args'
import { signInOperator } from './operator'

const USAGE =
  'usage: clear-stop.ts --list | clear-stop.ts <subaccount row id | exchange id> --reason "<text>" --operator <name>'

async function rowIdOf(sql: Sql, ref: string): Promise<string | undefined> {
  if (UUID.test(ref)) return ref.toLowerCase()
  if (!/^[0-9]{1,19}$/.test(ref)) usage(`not a subaccount id: ${ref}`)
  const [row] = await sql<{ id: string }[]>`select id from subaccounts where exchange_id = ${ref}`
  return row?.id
}

function usage(message: string): never {
  return usageError(USAGE, message)
}

const { values, positionals } = parseCli(USAGE, {
  allowPositionals: true,
  options: { reason: { type: 'string' }, operator: { type: 'string' }, list: { type: 'boolean', default: false } },
})

loadDotEnvLocal()
const config = loadConfigOrExit(processEnv)
const database = createDatabase(config.databaseUrl, { max: 2, appName: 'wheelhouse-clear-stop' })
let code = 0
try {
  if (values.list) {
    const rows = await database.sql<
      { id: string; user_id: string; asset: string; exchange_id: string; stopped_at: Date; stop_reason: string }[]
    >`
      select id, user_id, asset, exchange_id::text as exchange_id, stopped_at, stop_reason from subaccounts
      where stopped_at is not null order by stopped_at limit 1000`
    console.log(JSON.stringify({ stopped: rows }))
  } else {
    const [ref] = positionals
    if (!ref || positionals.length !== 1) usage('one subaccount is required')
    if (!values.reason?.trim()) usage('--reason is required: say what explained the divergence')
    const rowId = await rowIdOf(database.sql, ref)
    if (!rowId) {
      console.log(JSON.stringify({ error: 'NOT_FOUND', message: 'no such subaccount' }))
      code = 1
    } else {
      const operator = await signInOperator(database.sql, values.operator, 'operator')
      const clients = buildChainClients(buildChainRegistry(config, configuredChainOverrides(config)))
      const { proposal, existing } = await propose(
        { sql: database.sql, clock: systemClock, clients, approvalsRequired: config.operators.approvalsRequired },
        { action: 'subaccount_stop_clear', subject: rowId, reason: values.reason, proposedBy: operator.name },
      )
      console.log(
        JSON.stringify({ proposal: { id: proposal.id, action: proposal.action, status: proposal.status }, existing }),
      )
    }
  }
} catch (e) {
  if (!(e instanceof AppError)) throw e
  console.log(JSON.stringify({ error: e.code, message: e.message }))
  code = 1
} finally {
  await database.close()
}
process.exit(code)
