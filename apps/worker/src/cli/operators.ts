/**
 * The operators (packages/ops/src/operators.ts, docs/operations.md "Operators and roles"): who may
 * sign in to the desk and Bull Board, with which role. Only the schema owner may change them, so this
 * tool connects with DATABASE_OWNER_URL (as `pnpm db:migrate` does; DATABASE_URL when that is unset,
 * a deployment whose application connects as the owner):
 *
 *   pnpm --filter @wh/worker exec tsx src/cli/operators.ts --list
 *   pnpm --filter @wh/worker exec tsx src/cli/operators.ts <name> --create --role <viewer|operator|approver> [--no-password]
 *   pnpm --filter @wh/worker exec tsx src/cli/operators.ts <name> --password
 *   pnpm --filter @wh/worker exec tsx src/cli/operators.ts <name> --role <role>
 *   pnpm --filter @wh/worker exec tsx src/cli/operators.ts <name> --disable | --enable
 *
 * A password is read from standard input (typed without echo at a terminal, or the first line piped
 * in), never from the command line; it must have at least 15 characters. `--no-password`: an operator
 * who signs in through the authenticating proxy only (ADMIN_AUTH=proxy). A change of password or role,
 * or disabling, ends the operator's sessions. Prints one JSON line; exit code 0 on success, 1 when
 * refused, 2 on bad usage.
 */
import { loadDotEnvLocal, processEnv } from '@wh/config'
import { AppError } from '@wh/core'
import { createDatabase } from '@wh/db'
import { createOperator, listOperators, setOperatorDisabled, setOperatorPassword, setOperatorRole } from '@wh/ops'
import { parseCli, usageError } from './args'
import { readSecretLine } from './operator'

const USAGE =
  'usage: operators.ts --list | <name> --create --role <role> [--no-password] | <name> --password | <name> --role <role> | <name> --disable | <name> --enable'

function usage(message: string): never {
  return usageError(USAGE, message)
}

const { values, positionals } = parseCli(USAGE, {
  allowPositionals: true,
  options: {
    list: { type: 'boolean', default: false },
    create: { type: 'boolean', default: false },
    password: { type: 'boolean', default: false },
    'no-password': { type: 'boolean', default: false },
    role: { type: 'string' },
    disable: { type: 'boolean', default: false },
    enable: { type: 'boolean', default: false },
  },
})
const [name] = positionals
const acts = [values.list, values.create, values.password, values.disable, values.enable].filter(Boolean).length
if (acts > 1 || (acts === 0 && values.role === undefined))
  usage('choose one of --list, --create, --password, --role, --disable, --enable')
if (!values.list && (!name || positionals.length !== 1)) usage('one operator name is required')
if (values.create && values.role === undefined) usage('--create needs --role')

loadDotEnvLocal()
const env = processEnv()
const ownerUrl = env.DATABASE_OWNER_URL || env.DATABASE_URL
if (!ownerUrl) usage('DATABASE_OWNER_URL (or DATABASE_URL) is required')
const database = createDatabase(ownerUrl, { max: 1, appName: 'wheelhouse-operators' })
const sql = database.sql
const newPassword = async () => {
  const first = await readSecretLine(`new password of ${name}: `)
  return first
}
let code = 0
try {
  let out: unknown
  if (values.list) out = { operators: await listOperators(sql) }
  else if (values.create) {
    const password = values['no-password'] ? undefined : await newPassword()
    out = { operator: await createOperator(sql, { name: name as string, role: values.role as string, password }) }
  } else if (values.password) out = { operator: await setOperatorPassword(sql, name as string, await newPassword()) }
  else if (values.disable || values.enable)
    out = { operator: await setOperatorDisabled(sql, name as string, values.disable) }
  else out = { operator: await setOperatorRole(sql, name as string, values.role as string) }
  console.log(JSON.stringify(out))
} catch (e) {
  if (!(e instanceof AppError)) throw e
  console.log(JSON.stringify({ error: e.code, message: e.message }))
  code = 1
} finally {
  await database.close()
}
process.exit(code)
