/**
 * Ops entry point for solvency and the platform stop (docs/solvency.md):
 *
 *   pnpm --filter @wh/worker exec tsx src/cli/solvency.ts --show
 *   pnpm --filter @wh/worker exec tsx src/cli/solvency.ts --run
 *   pnpm --filter @wh/worker exec tsx src/cli/solvency.ts --stop --reason "<why>" --operator <name>
 *   pnpm --filter @wh/worker exec tsx src/cli/solvency.ts --clear --reason "<what explained it>" --operator <name>
 *
 * `--show` prints the latest run's totals, open deficit episodes and open stops; `--run` runs the
 * solvency tick's run now (it alerts and stops the platform as the tick would); `--stop` raises
 * the platform stop at once; `--clear` proposes to lift it, which takes effect once other approvers
 * approved (cli/proposals.ts, docs/operations.md "Approvals"). Both are recorded with the operator,
 * signed in with their password on standard input (cli/operator.ts), and why. Reads the worker's
 * environment (.env.local filled in); prints one JSON line and nothing of the configuration. Exit
 * code 0 on success (also when nothing changed), 1 when refused, 2 on bad usage.
 */
import { loadConfigOrExit, loadDotEnvLocal, processEnv } from '@wh/config'
import { AppError, systemClock } from '@wh/core'
import { createDatabase } from '@wh/db'
import { openPlatformStops, propose, raisePlatformStop } from '@wh/ops'
import { latestRun, openDeficits, runSolvency, solvencyDeps } from '@wh/solvency'
import { Redis } from 'ioredis'
import { buildWorkerDeps } from '../deps'
import { parseCli, usageError } from './args'
import { signInOperator } from './operator'

const USAGE =
  'usage: solvency.ts --show | --run | --stop --reason "<text>" --operator <name> | --clear --reason "<text>" --operator <name>'

function usage(message: string): never {
  return usageError(USAGE, message)
}

const { values } = parseCli(USAGE, {
  options: {
    show: { type: 'boolean', default: false },
    run: { type: 'boolean', default: false },
    stop: { type: 'boolean', default: false },
    clear: { type: 'boolean', default: false },
    reason: { type: 'string' },
    operator: { type: 'string' },
  },
})
const chosen = (['show', 'run', 'stop', 'clear'] as const).filter((k) => values[k])
if (chosen.length !== 1) usage('choose one of --show, --run, --stop, --clear')
const reason = values.reason?.trim()
if ((values.stop || values.clear) && !reason) usage('--reason is required: it is recorded with the decision')

const json = (v: unknown) => JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x))

loadDotEnvLocal()
const config = loadConfigOrExit(processEnv)
const database = createDatabase(config.databaseUrl, { max: 2, appName: 'wheelhouse-solvency' })
let code = 0
try {
  const sql = database.sql
  if (values.show) {
    const [run, deficits, stops] = await Promise.all([latestRun(sql), openDeficits(sql), openPlatformStops(sql)])
    console.log(
      json({
        run: run && {
          id: run.id,
          finishedAt: run.finishedAt,
          complete: run.complete,
          totals: run.totals,
          surpluses: run.surpluses,
          errors: run.errors,
        },
        deficits,
        stops,
      }),
    )
  } else if (values.run) {
    const redis = new Redis(config.cacheUrl, { maxRetriesPerRequest: 1 })
    try {
      const deps = buildWorkerDeps(config, { sql, redis, log: { info() {}, warn() {} } })
      const r = await runSolvency(solvencyDeps(deps))
      console.log(
        json({
          runId: r.runId,
          complete: r.complete,
          totals: r.totals,
          deficits: r.deficits.map((d) => d.currency),
          surpluses: r.surpluses,
          errors: r.errors,
          stopRaised: r.stopRaised,
        }),
      )
    } finally {
      redis.disconnect()
    }
  } else if (values.stop) {
    const operator = await signInOperator(sql, values.operator, 'operator')
    const r = await raisePlatformStop(sql, { raisedBy: 'operator', reason: reason as string, actor: operator.name })
    console.log(json({ stopped: true, alreadyDone: !r.raised, stop: r.stop }))
  } else {
    const operator = await signInOperator(sql, values.operator, 'operator')
    const { proposal, existing } = await propose(
      { sql, clock: systemClock, clients: new Map(), approvalsRequired: config.operators.approvalsRequired },
      { action: 'platform_stop_clear', subject: 'platform', reason: reason as string, proposedBy: operator.name },
    )
    console.log(json({ proposal: { id: proposal.id, action: proposal.action, status: proposal.status }, existing }))
  }
} catch (e) {
  if (!(e instanceof AppError)) throw e
  console.log(json({ error: e.code, message: e.message }))
  code = 1
} finally {
  await database.close()
}
process.exit(code)
