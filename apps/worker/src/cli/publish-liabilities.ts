/**
 * Publishes the proof of liabilities now (docs/solvency.md "Proof of liabilities"), as the daily
 * `liabilities-publish` tick does: the tree of what every user is owed, read from the ledger in one
 * snapshot, stored with its root in one transaction; negative totals counted as 0 and alerted;
 * trees older than the kept days pruned (roots kept).
 *
 *   pnpm --filter @wh/worker exec tsx src/cli/publish-liabilities.ts            once per UTC day
 *   pnpm --filter @wh/worker exec tsx src/cli/publish-liabilities.ts --force    another root today
 *   pnpm --filter @wh/worker exec tsx src/cli/publish-liabilities.ts --keep-days 90
 *
 * Reads the same environment as the worker (.env.local filled in); prints one JSON line (the
 * root's id, hash, totals, leaf count, timings) and nothing of the configuration. Exit code 0 when
 * a root was published or today's already was, 1 when nobody holds anything (no root), 2 on bad usage.
 */
import { loadConfigOrExit, loadDotEnvLocal, processEnv } from '@wh/config'
import { systemClock } from '@wh/core'
import { createDatabase } from '@wh/db'
import { LIABILITY_TREE_KEEP_DAYS, runLiabilitiesPublish } from '@wh/proof/publish-run'
import { createAlerter } from '@wh/wallet'
import { workerLogger } from '../logger'
import { parseCli, usageError } from './args'

const USAGE = 'usage: publish-liabilities.ts [--force] [--keep-days <days>]'

function usage(message: string): never {
  return usageError(USAGE, message)
}

const { values } = parseCli(USAGE, {
  options: {
    force: { type: 'boolean', default: false },
    'keep-days': { type: 'string', default: String(LIABILITY_TREE_KEEP_DAYS) },
  },
})
const keepDays = Number(values['keep-days'])
if (!Number.isSafeInteger(keepDays) || keepDays < 1) usage('--keep-days must be a whole number of days, 1 or more')

loadDotEnvLocal()
const config = loadConfigOrExit(processEnv)
// logs to stderr: stdout carries the one JSON line
const log = workerLogger(config.logLevel, process.stderr)
const database = createDatabase(config.databaseUrl, { max: 4, appName: 'wheelhouse-publish-liabilities' })
const alerter = createAlerter({ botToken: config.alert?.botToken, chatId: config.alert?.chatId, log })
let code = 0
try {
  const result = await runLiabilitiesPublish({ sql: database.sql, clock: systemClock, alerter }, log, {
    force: values.force,
    keepDays,
  })
  console.log(JSON.stringify(result))
  if (result.status === 'empty') code = 1
} finally {
  await database.close()
}
process.exit(code)
