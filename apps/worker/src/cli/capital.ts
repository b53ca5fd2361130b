/**
 * Ops entry point for the platform's own capital (packages/ops/src/capital.ts, docs/ledger.md
 * "Platform capital"): money the operator brings into a platform holding, or takes out of it, is
 * journaled on the platform's equity account, so the holding's reconciliation finds what the
 * journal explains.
 *
 *   pnpm --filter @wh/worker exec tsx src/cli/capital.ts --contribute --holding hot --chain ethereum \
 *     --currency USDC --amount 50000 --reference tx:1:0x… --reason "hot wallet float" --operator <name>
 *   pnpm --filter @wh/worker exec tsx src/cli/capital.ts --withdraw … (the same options)
 *
 * `--amount` is a decimal in the currency's units (USDC 6 decimals, ETH 18, BTC 8); `--reference`
 * names the movement once (its transaction, `tx:{chain id}:{hash}`, or the treasury's reference): a
 * second run with it changes nothing. `derive` is the funding subaccount's chain. The operator, of
 * role approver (the journal's platform balances are what reconciliation compares), signs in with
 * their password on standard input. Prints one JSON line; exit code 0 on success, 1 when refused,
 * 2 on bad usage.
 */
import { loadConfigOrExit, loadDotEnvLocal, processEnv } from '@wh/config'
import { AppError, decimalsOf, toBaseUnits } from '@wh/core'
import { createDatabase } from '@wh/db'
import { recordCapital } from '@wh/ops'
import { parseCli, usageError } from './args'
import { signInOperator } from './operator'

const USAGE =
  'usage: capital.ts (--contribute | --withdraw) --holding hot|gas --chain <chain> --currency <USDC|ETH|BTC> --amount <decimal> --reference <ref> --reason "<why>" --operator <name>'

function usage(message: string): never {
  return usageError(USAGE, message)
}

const { values } = parseCli(USAGE, {
  options: {
    contribute: { type: 'boolean', default: false },
    withdraw: { type: 'boolean', default: false },
    holding: { type: 'string' },
    chain: { type: 'string' },
    currency: { type: 'string' },
    amount: { type: 'string' },
    reference: { type: 'string' },
    reason: { type: 'string' },
    operator: { type: 'string' },
  },
})
if (values.contribute === values.withdraw) usage('say --contribute or --withdraw')
if (values.holding !== 'hot' && values.holding !== 'gas') usage('--holding is hot or gas')
if (!values.chain || !/^[a-z][a-z0-9-]{0,31}$/.test(values.chain))
  usage('--chain names a chain (derive: the funding subaccount)')
const decimals = decimalsOf(values.currency ?? '')
if (decimals === undefined) usage('--currency is USDC, ETH or BTC')
let amount: bigint
try {
  amount = toBaseUnits(values.amount ?? '', decimals)
} catch {
  usage('--amount is a decimal in the currency, with no more decimals than it has')
}
if (amount <= 0n) usage('--amount is positive')
if (!values.reference || !/^[A-Za-z0-9][A-Za-z0-9:._-]{0,127}$/.test(values.reference))
  usage('--reference names the movement: letters, digits and : . _ -, at most 128')
const reason = values.reason?.trim()
if (!reason) usage('--reason is required: it is journaled and recorded')

loadDotEnvLocal()
const config = loadConfigOrExit(processEnv)
const database = createDatabase(config.databaseUrl, { max: 2, appName: 'wheelhouse-capital' })
let code = 0
try {
  const operator = await signInOperator(database.sql, values.operator, 'approver')
  const r = await recordCapital(database.sql, {
    direction: values.contribute ? 'contributed' : 'withdrawn',
    holding: values.holding,
    chain: values.chain,
    currency: values.currency as string,
    amount,
    reference: values.reference,
    reason,
    actor: operator.name,
  })
  console.log(JSON.stringify(r))
} catch (e) {
  if (!(e instanceof AppError)) throw e
  console.log(JSON.stringify({ error: e.code, message: e.message }))
  code = 1
} finally {
  await database.close()
}
process.exit(code)
