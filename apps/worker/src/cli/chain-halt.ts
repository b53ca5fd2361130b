/**
 * Ops entry point for a deposit watch halted by a reorg past its cursor (packages/ops/src/chain-halt.ts,
 * docs/hostile-world.md "Chains are who they say they are"):
 *
 *   pnpm --filter @wh/worker exec tsx src/cli/chain-halt.ts --list
 *   pnpm --filter @wh/worker exec tsx src/cli/chain-halt.ts <chain> --inspect [--from <block>]
 *   pnpm --filter @wh/worker exec tsx src/cli/chain-halt.ts <chain> --resume [--from <block>] --reason "<why>" --operator <name>
 *
 * `--inspect` lists the deposits credited from the blocks the reorg may have replaced, and whether
 * each is still in the canonical chain; `--resume` proposes to scan again from `--from` (default:
 * the cursor) and lift the halt: it credits deposits again, so it takes effect once other approvers
 * approved it (cli/proposals.ts, docs/operations.md "Approvals"), recorded in operator_actions. The
 * operator signs in with their password on standard input (cli/operator.ts). Reads the worker's
 * environment; prints one JSON line and nothing of the configuration. Exit code 0 on success, 1
 * when refused, 2 on bad usage.
 */
import { loadConfigOrExit, loadDotEnvLocal, processEnv } from '@wh/config'
import { AppError, systemClock } from '@wh/core'
import { createDatabase } from '@wh/db'
import { inspectHalt, propose } from '@wh/ops'
import {
  buildChainClients,
  buildChainRegistry,
  CHAIN_NAMES,
  type ChainName,
  configuredChainOverrides,
  listCursors,
} from '@wh/wallet'
import { parseCli, usageError } from './args'
import { signInOperator } from './operator'

const USAGE =
  'usage: chain-halt.ts --list | <chain> --inspect [--from <block>] | <chain> --resume [--from <block>] --reason "<why>" --operator <name>'

function usage(message: string): never {
  return usageError(USAGE, message)
}

const { values, positionals } = parseCli(USAGE, {
  allowPositionals: true,
  options: {
    list: { type: 'boolean', default: false },
    inspect: { type: 'boolean', default: false },
    resume: { type: 'boolean', default: false },
    from: { type: 'string' },
    reason: { type: 'string' },
    operator: { type: 'string' },
  },
})

const json = (o: unknown) => JSON.stringify(o, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))
loadDotEnvLocal()
const config = loadConfigOrExit(processEnv)
const registry = buildChainRegistry(config, configuredChainOverrides(config))
const clients = buildChainClients(registry)
const database = createDatabase(config.databaseUrl, { max: 2, appName: 'wheelhouse-chain-halt' })
let code = 0
try {
  if (values.list) {
    console.log(json({ cursors: await listCursors(database.sql) }))
  } else {
    const [chain] = positionals
    if (!chain || positionals.length !== 1 || !(CHAIN_NAMES as readonly string[]).includes(chain))
      usage(`one chain is required: ${CHAIN_NAMES.join(', ')}`)
    if (values.inspect === values.resume) usage('say --inspect or --resume')
    if (values.from !== undefined && !/^[0-9]{1,19}$/.test(values.from)) usage('--from is a block number')
    const from = values.from === undefined ? undefined : BigInt(values.from)
    const client = clients.get(chain as ChainName)?.publicClient
    if (!client) usage(`no RPC for ${chain}`)
    if (values.inspect) {
      console.log(json(await inspectHalt(database.sql, client, chain as ChainName, from)))
    } else {
      if (!values.reason?.trim()) usage('--reason is required: say what was checked and decided')
      const operator = await signInOperator(database.sql, values.operator, 'operator')
      const { proposal, existing } = await propose(
        { sql: database.sql, clock: systemClock, clients, approvalsRequired: config.operators.approvalsRequired },
        {
          action: 'chain_resume',
          subject: chain,
          params: from === undefined ? {} : { fromBlock: from.toString() },
          reason: values.reason,
          proposedBy: operator.name,
        },
      )
      console.log(json({ proposal: { id: proposal.id, action: proposal.action, status: proposal.status }, existing }))
    }
  }
} catch (e) {
  if (!(e instanceof AppError)) throw e
  console.log(json({ error: e.code, message: e.message }))
  code = 1
} finally {
  await database.close()
}
process.exit(code)
