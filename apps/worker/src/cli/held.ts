/**
 * Ops entry point for held transactions (packages/ops/src/held.ts, docs/hostile-world.md "Never pay twice"):
 *
 *   pnpm --filter @wh/worker exec tsx src/cli/held.ts --list
 *   pnpm --filter @wh/worker exec tsx src/cli/held.ts <outbound id> --recheck --reason "<evidence>" --operator <name>
 *   pnpm --filter @wh/worker exec tsx src/cli/held.ts <outbound id> --failed --reason "<evidence>" --operator <name>
 *   pnpm --filter @wh/worker exec tsx src/cli/held.ts <outbound id> --mark-sent <tx hash> --reason "<evidence>" --operator <name>
 *
 * The operator signs in with their password on standard input (cli/operator.ts). A recheck takes
 * effect at once (it releases nothing: the chain is read afresh); failing a transaction or marking
 * it sent releases money, so it is proposed, and takes effect once other approvers approved it
 * (cli/proposals.ts, docs/operations.md "Approvals"). Reads the same environment as the worker;
 * prints one JSON line and nothing of the configuration. Exit code 0 on success, 1 when refused
 * (not held, not found, a wrong password), 2 on bad usage.
 */
import { loadConfigOrExit, loadDotEnvLocal, processEnv } from '@wh/config'
import { AppError, systemClock } from '@wh/core'
import { createDatabase } from '@wh/db'
import { listHeld, propose, recheckHeld } from '@wh/ops'
import { buildChainClients, buildChainRegistry, configuredChainOverrides } from '@wh/wallet'
import { parseCli, UUID, usageError } from './args'
import { signInOperator } from './operator'

const USAGE =
  'usage: held.ts --list | held.ts <outbound id> (--recheck | --failed | --mark-sent <tx hash>) --reason "<evidence>" --operator <name>'

function usage(message: string): never {
  return usageError(USAGE, message)
}

const { values, positionals } = parseCli(USAGE, {
  allowPositionals: true,
  options: {
    list: { type: 'boolean', default: false },
    recheck: { type: 'boolean', default: false },
    failed: { type: 'boolean', default: false },
    'mark-sent': { type: 'string' },
    reason: { type: 'string' },
    operator: { type: 'string' },
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
    const markSent = values['mark-sent']
    if ([values.recheck, values.failed, markSent !== undefined].filter(Boolean).length !== 1)
      usage('say --recheck, --failed or --mark-sent <tx hash>')
    if (markSent !== undefined && !/^0x[0-9a-fA-F]{64}$/.test(markSent)) usage('--mark-sent takes a transaction hash')
    const reason = values.reason?.trim()
    if (!reason) usage('--reason is required: say what evidence decided it')
    const operator = await signInOperator(database.sql, values.operator, 'operator')
    if (values.recheck) {
      const r = await recheckHeld(database.sql, id, { reason, actor: operator.name })
      console.log(JSON.stringify({ id, state: r.record.state, txHash: r.record.txHash, alreadyDone: r.alreadyDone }))
    } else {
      const clients = buildChainClients(buildChainRegistry(config, configuredChainOverrides(config)))
      const deps = {
        sql: database.sql,
        clock: systemClock,
        clients,
        approvalsRequired: config.operators.approvalsRequired,
      }
      const { proposal, existing } = await propose(deps, {
        action: values.failed ? 'outbound_fail' : 'outbound_mark_sent',
        subject: id,
        ...(markSent !== undefined && { params: { txHash: markSent.toLowerCase() } }),
        reason,
        proposedBy: operator.name,
      })
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
