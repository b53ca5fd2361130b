/**
 * Ops entry point for a deposit watch halted by a reorg past its cursor (packages/ops/src/chain-halt.ts,
 * docs/hostile-world.md "Chains are who they say they are"):
 *
 *   pnpm --filter @wh/worker exec tsx src/cli/chain-halt.ts --list
 *   pnpm --filter @wh/worker exec tsx src/cli/chain-halt.ts <chain> --inspect [--from <block>]
 *   pnpm --filter @wh/worker exec tsx src/cli/chain-halt.ts <chain> --resume [--from <block>] --reason "<why>" [--by <name>]
 *
 * `--inspect` lists the deposits credited from the blocks the reorg may have replaced, and whether
 * each is still in the canonical chain; `--resume` scans again from `--from` (default: the cursor)
 * and lifts the halt, recorded in operator_actions. Reads the worker's environment; prints one JSON
 * line and nothing of the configuration. Exit code 0 on success, 1 when refused, 2 on bad usage.
 */
import { loadConfigOrExit, loadDotEnvLocal, processEnv } from '@wh/config'
import { createDatabase } from '@wh/db'
import { inspectHalt, resumeChain } from '@wh/ops'
import {
  buildChainClients,
  buildChainRegistry,
  CHAIN_NAMES,
  type ChainName,
  configuredChainOverrides,
  listCursors,
} from '@wh/wallet'
import { parseCli, usageError } from './args'

const USAGE =
  'usage: chain-halt.ts --list | <chain> --inspect [--from <block>] | <chain> --resume [--from <block>] --reason "<why>" [--by <name>]'

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
    by: { type: 'string' },
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
      const resumed = await resumeChain(database.sql, client, {
        chain: chain as ChainName,
        ...(from !== undefined && { fromBlock: from }),
        reason: values.reason,
        ...(values.by !== undefined && { actor: values.by }),
      })
      if (!resumed) code = 1
      console.log(json(resumed ? { chain, resumed: true } : { error: 'NOT_HALTED', message: `${chain} is not halted` }))
    }
  }
} finally {
  await database.close()
}
process.exit(code)
