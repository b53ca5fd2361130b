/**
 * Ops entry point for solvency and the platform stop (docs/solvency.md):
 *
 *   pnpm --filter @wh/worker exec tsx src/cli/solvency.ts --show
 *   pnpm --filter @wh/worker exec tsx src/cli/solvency.ts --run
 *   pnpm --filter @wh/worker exec tsx src/cli/solvency.ts --stop --reason "<why>" [--operator <name>]
 *   pnpm --filter @wh/worker exec tsx src/cli/solvency.ts --clear --reason "<what explained it>" [--operator <name>]
 *
 * `--show` prints the latest run's totals, open deficit episodes and open stops; `--run` runs the
 * solvency tick's run now (it alerts and stops the platform as the tick would); `--stop` and
 * `--clear` raise and clear the platform stop, recorded with who (the OS user unless --operator)
 * and why. Reads the worker's environment (.env.local filled in); prints one JSON line and
 * nothing of the configuration. Exit code 0 on success (also when nothing changed), 2 on bad usage.
 */
import { loadConfigOrExit, loadDotEnvLocal, processEnv } from '@wh/config'
import { createDatabase } from '@wh/db'
import { clearPlatformStop, openPlatformStops, raisePlatformStop } from '@wh/ops'
import { latestRun, openDeficits, runSolvency } from '@wh/solvency'
import { Redis } from 'ioredis'
import { buildWorkerDeps } from '../deps'
import { solvencyDeps } from '../jobs/solvency/solvency'
import { parseCli, usageError } from './args'

const USAGE =
  'usage: solvency.ts --show | --run | --stop --reason "<text>" [--operator <name>] | --clear --reason "<text>" [--operator <name>]'

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
    const r = await raisePlatformStop(sql, { raisedBy: 'operator', reason: reason as string, actor: values.operator })
    console.log(json({ stopped: true, alreadyDone: !r.raised, stop: r.stop }))
  } else {
    const cleared = await clearPlatformStop(sql, { reason: reason as string, actor: values.operator })
    console.log(json({ stopped: false, cleared }))
  }
} finally {
  await database.close()
}
process.exit(0)
