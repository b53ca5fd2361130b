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
 * names the movement once (its transaction, `tx:{chain id}:{hash}`, or `treasury:{its reference}`),
 * written by the ledger in one spelling whatever the case typed (capital-args.ts): a second run with
 * it changes nothing. `derive` is the funding subaccount's chain. The operator, of
 * role approver (the journal's platform balances are what reconciliation compares), signs in with
 * their password on standard input. Prints one JSON line; exit code 0 on success, 1 when refused,
 * 2 on bad usage.
 */
import { loadConfigOrExit, loadDotEnvLocal, processEnv } from '@wh/config'
import { AppError, systemClock } from '@wh/core'
import { createDatabase } from '@wh/db'
import { recordCapital } from '@wh/ops'
import { parseCli, usageError } from './args'
import { CAPITAL_USAGE, capitalMovementOf } from './capital-args'
import { signInOperator } from './operator'

const { values } = parseCli(CAPITAL_USAGE, {
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
const movement = capitalMovementOf(values)
if ('usage' in movement) usageError(CAPITAL_USAGE, movement.usage)

loadDotEnvLocal()
const config = loadConfigOrExit(processEnv)
const database = createDatabase(config.databaseUrl, { max: 2, appName: 'wheelhouse-capital' })
let code = 0
try {
  const operator = await signInOperator(database.sql, values.operator, 'approver')
  const r = await recordCapital(database.sql, systemClock, { ...movement, actor: operator.name })
  console.log(JSON.stringify(r))
} catch (e) {
  if (!(e instanceof AppError)) throw e
  console.log(JSON.stringify({ error: e.code, message: e.message }))
  code = 1
} finally {
  await database.close()
}
process.exit(code)
