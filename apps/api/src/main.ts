/**
 * The API process: read its configuration, build the server, listen, shut down gracefully.
 * It reads no private key and no mnemonic (loadApiConfig): deposit addresses come from DEPOSIT_XPUB
 * (docs/architecture.md "Least privilege"). With API_PROCESSES > 1 this process is the cluster's
 * primary (cluster.ts): it forks that many API processes sharing PORT and serves nothing itself.
 */
import cluster from 'node:cluster'
import {
  API_ENV_NAMES,
  ENV_LOCAL_PATH,
  forbiddenApiEnv,
  loadApiConfig,
  loadConfigOrExit,
  loadDotEnvLocal,
  processEnv,
} from '@wh/config'
import { createDatabase, type Database } from '@wh/db'
import { BULL_PREFIX, logErrorsOf, QUEUES } from '@wh/jobs'
import {
  buildChainClients,
  buildChainRegistry,
  type ChainClients,
  ChainGuard,
  ChainIdMismatchError,
  type ChainName,
  checkChainsAtStart,
  configuredChainOverrides,
  DepositKeyring,
} from '@wh/wallet'
import { Queue } from 'bullmq'
import { Redis } from 'ioredis'
import { buildAdminServer } from './admin/server'
import { runPrimary } from './cluster'
import { buildServer } from './server'

/** A query waits at most this long for a reconnection attempt while Postgres is unreachable. */
const DB_MAX_RECONNECT_DELAY_MS = 500

// the local run's .env.local holds the worker's keys too: take only the API's variables from it
loadDotEnvLocal(ENV_LOCAL_PATH, API_ENV_NAMES)
const config = loadConfigOrExit(processEnv, loadApiConfig)
if (config.apiProcesses > 1 && cluster.isPrimary) {
  runPrimary(config.apiProcesses, (msg, fields) => console.log(JSON.stringify({ level: 'info', msg, ...fields })))
} else {
  await serve()
}

/**
 * The operator desk: its own listener, loopback by default, only when ADMIN_PORT is set; operators
 * sign in with their own names (docs/operations.md "Operators and roles").
 */
async function buildDesk(database: Database, clients: ReadonlyMap<ChainName, ChainClients>, queues: Queue[]) {
  if (!config.adminListener) return undefined
  return buildAdminServer({
    database,
    clients,
    queues,
    operators: config.operators,
    logLevel: config.logLevel,
    trustProxy: typeof config.trustProxy === 'object' ? [...config.trustProxy] : config.trustProxy,
  })
}

async function serve(): Promise<void> {
  // a Postgres outage answers 503 at once and the API serves again as soon as the server is back
  // (tested by test/fault/restarts.test.ts), instead of requests waiting out a growing reconnect delay
  const database = createDatabase(config.databaseUrl, {
    appName: 'api',
    maxReconnectDelayMs: DB_MAX_RECONNECT_DELAY_MS,
  })
  const redis = new Redis(config.cacheUrl, { maxRetriesPerRequest: 2, enableOfflineQueue: false, lazyConnect: false })
  redis.on('error', () => {}) // readiness reports it; ioredis reconnects by itself
  // public-only: the API shows deposit addresses and can never sign for them
  const keyring = DepositKeyring.fromExtendedPublicKey(config.depositXpub)
  // the chains as the worker watches them (in the local run, each chain's own node, chain id and USDC)
  const chains = buildChainRegistry(config, configuredChainOverrides(config))
  // chains are who they say they are (docs/hostile-world.md): the API shows chain ids and dry-runs
  // withdrawals on these RPCs, so a wrong one stops it; one not answering yet is only a warning
  const clients = buildChainClients(chains)
  try {
    const unreachable = await checkChainsAtStart(new ChainGuard(chains, clients))
    if (unreachable.length > 0)
      console.warn(JSON.stringify({ msg: 'chain RPC not answering at start', chains: unreachable }))
  } catch (e) {
    if (!(e instanceof ChainIdMismatchError)) throw e
    console.error(e.message)
    process.exit(1)
  }
  // every connection and queue logs its errors (throttled): none prints "Unhandled error event"
  const queueLog = { warn: (obj: object, msg?: string) => console.warn(JSON.stringify({ ...obj, msg })) }
  const queues = Object.values(QUEUES).map((name) =>
    logErrorsOf(
      new Queue(name, {
        connection: logErrorsOf(redis.duplicate({ maxRetriesPerRequest: null }), `queue ${name}`, queueLog),
        prefix: BULL_PREFIX,
      }),
      `queue ${name}`,
      queueLog,
    ),
  )
  const app = await buildServer({
    config,
    database,
    redis,
    keyring,
    chains,
    queues,
  })

  const admin = await buildDesk(database, clients, queues)

  // refused when NODE_ENV=production (loadApiConfig); elsewhere named, so a development setup that
  // hands the API the worker's environment is seen
  const ignored = forbiddenApiEnv(processEnv())
  if (ignored.length > 0)
    app.log.warn({ variables: ignored }, 'the API does not read these and must not hold them (refused in production)')

  let closing = false
  async function shutdown(signal: string) {
    if (closing) return
    closing = true
    app.log.info({ signal }, 'shutting down')
    const force = setTimeout(() => process.exit(1), 10_000)
    force.unref()
    await app.close()
    await admin?.close()
    await Promise.allSettled(queues.map((q) => q.close()))
    redis.disconnect()
    await database.close()
    process.exit(0)
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
  process.on('SIGINT', () => void shutdown('SIGINT'))

  await app.listen({ host: config.host, port: config.port })
  // a copy: the configuration is frozen and listen() writes to its options
  if (admin && config.adminListener)
    await admin.listen({ host: config.adminListener.host, port: config.adminListener.port })
}
