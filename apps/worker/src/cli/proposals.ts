/**
 * Ops entry point for four eyes (packages/ops/src/proposals.ts, docs/operations.md "Approvals"):
 *
 *   pnpm --filter @wh/worker exec tsx src/cli/proposals.ts --list [--all]
 *   pnpm --filter @wh/worker exec tsx src/cli/proposals.ts <proposal id> --show
 *   pnpm --filter @wh/worker exec tsx src/cli/proposals.ts <proposal id> --approve --operator <name>
 *   pnpm --filter @wh/worker exec tsx src/cli/proposals.ts <proposal id> --withdraw --reason "<why>" --operator <name>
 *
 * An approver other than the proposer approves; the approval that completes the proposal executes
 * it (the chain read again first for a held transaction). The operator signs in with their password
 * on standard input (cli/operator.ts). Reads the same environment as the worker; prints one JSON
 * line. Exit code 0 on success, 1 when refused, 2 on bad usage.
 */
import { loadConfigOrExit, loadDotEnvLocal, processEnv } from '@wh/config'
import { AppError, systemClock } from '@wh/core'
import { createDatabase } from '@wh/db'
import { approve, getProposal, hasRole, listProposals, withdrawProposal } from '@wh/ops'
import { buildChainClients, buildChainRegistry, configuredChainOverrides } from '@wh/wallet'
import { parseCli, UUID, usageError } from './args'
import { signInOperator } from './operator'

const USAGE =
  'usage: proposals.ts --list [--all] | <id> --show | <id> --approve --operator <name> | <id> --withdraw --reason "<why>" --operator <name>'

function usage(message: string): never {
  return usageError(USAGE, message)
}

const { values, positionals } = parseCli(USAGE, {
  allowPositionals: true,
  options: {
    list: { type: 'boolean', default: false },
    all: { type: 'boolean', default: false },
    show: { type: 'boolean', default: false },
    approve: { type: 'boolean', default: false },
    withdraw: { type: 'boolean', default: false },
    reason: { type: 'string' },
    operator: { type: 'string' },
  },
})
const chosen = (['list', 'show', 'approve', 'withdraw'] as const).filter((k) => values[k])
if (chosen.length !== 1) usage('choose one of --list, --show, --approve, --withdraw')
const [id] = positionals
if (!values.list && (!id || positionals.length !== 1 || !UUID.test(id))) usage('one proposal id is required')
if (values.withdraw && !values.reason?.trim()) usage('--reason is required to withdraw')

loadDotEnvLocal()
const config = loadConfigOrExit(processEnv)
const database = createDatabase(config.databaseUrl, { max: 2, appName: 'wheelhouse-proposals' })
const sql = database.sql
let code = 0
try {
  if (values.list) console.log(JSON.stringify({ proposals: await listProposals(sql, { open: !values.all }) }))
  else if (values.show) console.log(JSON.stringify({ proposal: (await getProposal(sql, id as string)) ?? null }))
  else if (values.approve) {
    const operator = await signInOperator(sql, values.operator, 'approver')
    const clients = buildChainClients(buildChainRegistry(config, configuredChainOverrides(config)))
    const deps = { sql, clock: systemClock, clients, approvalsRequired: config.operators.approvalsRequired }
    const r = await approve(deps, id as string, operator.name)
    console.log(JSON.stringify({ proposal: r.proposal, executed: r.executed, alreadyDone: r.alreadyDone }))
  } else {
    const operator = await signInOperator(sql, values.operator, 'operator')
    const by = { name: operator.name, approver: hasRole(operator.role, 'approver') }
    console.log(JSON.stringify({ proposal: await withdrawProposal(sql, id as string, by, values.reason as string) }))
  }
} catch (e) {
  if (!(e instanceof AppError)) throw e
  console.log(JSON.stringify({ error: e.code, message: e.message }))
  code = 1
} finally {
  await database.close()
}
process.exit(code)
