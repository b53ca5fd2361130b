/**
 * A worker process: consumes the queues WORKER_QUEUES names (all when empty), so ops can
 * scale sweeps apart from trading; registers the tick schedulers; shuts down gracefully,
 * finishing the jobs in flight (a job cut off by SIGKILL is retried by BullMQ's stall check).
 */
import { loadConfigOrExit, loadDotEnvLocal, processEnv } from '@wh/config'
import { createDatabase } from '@wh/db'
import { logErrorsOf, selectConcurrency, selectQueues } from '@wh/jobs'
import { checkExchangeContracts, checkSessionKeys } from '@wh/subaccounts'
import { ChainIdMismatchError, checkChainsAtStart, registerPlatformWallets } from '@wh/wallet'
import { Redis } from 'ioredis'
import { clockSyncedTicks } from './clock-sync'
import { buildWorkerDeps } from './deps'
import { startWorkerPriceFeed } from './feeds/prices'
import { ticks } from './jobs/index'
import { workerLogger } from './logger'
import { startRuntime } from './runtime'

loadDotEnvLocal()
const config = loadConfigOrExit(processEnv)

const log = workerLogger(config.logLevel)
const consume = selectQueues(config.workerQueues)
const concurrency = selectConcurrency(config.workerConcurrency)
const connection = logErrorsOf(new Redis(config.cacheUrl, { maxRetriesPerRequest: null }), 'bullmq', log)
const redis = logErrorsOf(new Redis(config.cacheUrl), 'cache', log)
const database = createDatabase(config.databaseUrl, { appName: 'wheelhouse-worker' })
// built once: the keyring's PBKDF2 and hardened steps, one client set per chain, one exchange client
const deps = buildWorkerDeps(config, { sql: database.sql, redis, log })
// chains are who they say they are (docs/hostile-world.md): a wrong RPC stops the worker before
// anything runs; one that does not answer yet only waits (its ticks check it again)
try {
  const unreachable = await checkChainsAtStart(deps.chainGuard, {
    chainId: config.exchange.chainId,
    rpcUrl: config.exchange.chainRpcUrl,
  })
  if (unreachable.length > 0)
    log.warn({ chains: unreachable }, 'chain RPC not answering at start: its ticks wait for it')
} catch (e) {
  if (!(e instanceof ChainIdMismatchError)) throw e
  log.error({ chain: e.chain, expected: e.expected, actual: e.actual }, e.message)
  console.error(e.message)
  process.exit(1)
}
// Derive's L1 contracts, from configuration only: each is checked to be what it claims (chain id, code,
// an ABI call that answers) before money moves (docs/exchange-v3.md "Contracts")
const contracts = await checkExchangeContracts(config)
if (contracts.unreachable)
  log.warn({ reason: contracts.unreachable }, 'exchange chain not answering at start: its contracts are not checked')
for (const w of contracts.warnings) log.warn({}, w)
if (contracts.problems.length > 0) {
  const text = `exchange contracts are not what the configuration says:\n  - ${contracts.problems.join('\n  - ')}`
  log.error({ problems: contracts.problems }, text)
  console.error(text)
  process.exit(1)
}
// a key per duty, and none holding more (docs/operations.md "Exchange session keys"): read back from the
// exchange, a key beyond its duty, or one that cannot do it, stops the worker before anything runs
const keys = await checkSessionKeys(config, deps.exchange, deps.clock.now().getTime())
if ('unreadable' in keys)
  log.warn(
    { reason: keys.unreadable },
    'exchange session keys could not be read at start: the session-keys tick checks them',
  )
else if (keys.lines.length > 0) {
  const text = `exchange session keys do not fit their duties:\n  - ${keys.lines.join('\n  - ')}`
  log.error({ problems: keys.lines }, text)
  console.error(text)
  process.exit(1)
}
// the API holds no key: it learns the platform's own addresses here, to refuse withdrawals to them
await registerPlatformWallets(database.sql, deps.platformWallets)
// WORKER_CLOCK=exchange: every job reads the exchange's time first (the local run's demo moves it)
const runtime = await startRuntime({
  connection,
  ticks: clockSyncedTicks(ticks, deps.clock),
  consume,
  concurrency,
  log,
  deps,
})
// one upstream price subscription per deployment: every replica contends, one holds (docs/market-data.md)
const priceFeed = startWorkerPriceFeed(deps, log)

let closing = false
async function shutdown(signal: string) {
  if (closing) return
  closing = true
  log.info({ signal }, 'worker shutting down: finishing jobs in flight')
  const force = setTimeout(() => process.exit(1), 30_000)
  force.unref()
  await Promise.all([runtime.close(), priceFeed.close()])
  connection.disconnect()
  redis.disconnect()
  await database.close()
  process.exit(0)
}
process.on('SIGTERM', () => void shutdown('SIGTERM'))
process.on('SIGINT', () => void shutdown('SIGINT'))
// said once the signals are handled: from here a SIGTERM finishes the jobs in flight
log.info({ queues: consume, concurrency, ticks: ticks.map((t) => t.name), clock: config.workerClock }, 'worker started')
