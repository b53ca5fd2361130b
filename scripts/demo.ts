/**
 * The accelerated demo (README "Other commands"): `bash scripts/demo.sh [--keep]`.
 *
 * Runs a new demo user through deposit → wheel → withdrawal (apps/worker/demo/demo.ts) against
 * the local run: the deposit on base (carried to the exchange over CCTP), the withdrawal on arbitrum. When the local run is up it must have been started with `bash scripts/dev.sh
 * --demo` (the wheel runner on, the worker's clock following the simulator's, a database of its
 * own); when it is not, this starts it so, its output going to a log file, and stops it at the end
 * unless `--keep`. Prints each step with its time and the exchange's clock, then the user's USDC
 * summary and statement.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { openSync } from 'node:fs'
import { createConnection } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type Config, loadConfig, loadDotEnvLocal, processEnv } from '@wh/config'
import { TEST_PRIVATE_KEYS } from '@wh/testkit'
import { DemoStepTimeoutError, formatStatement, runDemo } from '../apps/worker/demo/demo'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
/** the local run's API port (scripts/dev.ts) */
const API_PORT = 3000
/** a first start creates the database cluster, migrates and deploys TestUSDC */
const STACK_START_TIMEOUT_MS = 180_000
const LOG_FILE = join(tmpdir(), 'wheelhouse-demo-stack.log')

/** The database `scripts/dev.ts --demo` runs on: the configured one's name with `_demo` (as there). */
function demoDatabaseUrl(url: string): string {
  const u = new URL(url)
  u.pathname = `${u.pathname}_demo`
  return u.toString()
}

function listening(port: number): Promise<boolean> {
  return new Promise((res) => {
    const socket = createConnection({ host: '127.0.0.1', port })
    socket.once('connect', () => {
      socket.destroy()
      res(true)
    })
    socket.once('error', () => res(false))
  })
}

async function healthy(base: string): Promise<boolean> {
  try {
    return (await fetch(`${base}/health/live`, { signal: AbortSignal.timeout(2_000) })).ok
  } catch {
    return false
  }
}

/**
 * `bash scripts/dev.sh --demo`'s program in the background, its output in LOG_FILE (in a process
 * group of its own with --keep, so it outlives this one); resolves once the API answers.
 */
async function startStack(port: number, keep: boolean): Promise<ChildProcess> {
  console.log(`starting the local run in demo mode (scripts/dev.ts --demo; its output: ${LOG_FILE})`)
  const out = openSync(LOG_FILE, 'w')
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts/dev.ts'), '--demo'], {
    cwd: ROOT,
    stdio: ['ignore', out, out],
    detached: keep,
  })
  const deadline = Date.now() + STACK_START_TIMEOUT_MS
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the local run stopped (${child.exitCode}); see ${LOG_FILE}`)
    if (Date.now() > deadline) throw new Error(`the local run did not answer in time; see ${LOG_FILE}`)
    if (await healthy(`http://127.0.0.1:${port}`)) return child
    await new Promise((r) => setTimeout(r, 250))
  }
}

async function stopStack(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return
  const exited = new Promise((r) => child.once('exit', r))
  child.kill('SIGINT')
  await exited
}

async function main() {
  const keep = process.argv.includes('--keep')
  // the local run's settings (.env.local), once its first start has written them
  const port = loadDotEnvLocal() ? loadConfig(processEnv(), { setup: true }).port : API_PORT
  let started: ChildProcess | undefined
  if (!(await listening(port))) {
    started = await startStack(port, keep)
    loadDotEnvLocal()
  }
  const config: Config = loadConfig(processEnv())
  const apiUrl = `http://127.0.0.1:${config.port}`
  let failed = false
  try {
    if (!config.localChains) throw new Error('.env.local names no USDC_ADDRESS_LOCAL_*: start the local run once')
    if (!started) console.log(`using the local run on ${apiUrl} (it must have been started with --demo)`)
    const report = await runDemo({
      apiUrl,
      siweDomain: config.siweDomain,
      simulatorUrl: config.exchange.httpUrl,
      // a deposit on base, carried to the exchange over CCTP; a withdrawal on arbitrum, refilled from L1 first
      rpcUrl: config.rpcUrls.base,
      usdc: config.localChains.base.usdc,
      withdrawal: { chain: 'arbitrum', rpcUrl: config.rpcUrls.arbitrum, usdc: config.localChains.arbitrum.usdc },
      // dev account 0: local-stack.ts minted it the TestUSDC deposits are made with
      funderKey: TEST_PRIVATE_KEYS[0],
      bull: { redisUrl: config.cacheUrl },
      databaseUrl: demoDatabaseUrl(config.databaseUrl),
      log: (line) => console.log(line),
    })
    console.log(`\n${formatStatement(report)}`)
    console.log(`\ndemo done in ${(report.totalMs / 1000).toFixed(1)} s (wall clock)`)
  } catch (e) {
    failed = true
    console.error(`\ndemo failed: ${(e as Error).message}`)
    if (e instanceof DemoStepTimeoutError)
      console.error(
        started
          ? `the local run's output is in ${LOG_FILE}`
          : 'a local run started without --demo keeps the wall clock and its own database: stop it and run ' +
              'bash scripts/demo.sh (it starts one), or start it with bash scripts/dev.sh --demo',
      )
  } finally {
    if (started && !keep) await stopStack(started)
    else if (started) console.log(`the local run keeps running (stop it with: kill -INT ${started.pid})`)
  }
  process.exit(failed ? 1 : 0)
}

await main()
