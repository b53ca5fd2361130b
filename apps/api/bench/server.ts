/**
 * The API as the benchmark runs it: the real server, plus one bare JWT-guarded route to
 * compare against (it exists only here). Listens on PORT from the environment it is given.
 */
import { loadConfig, processEnv } from '@wh/config'
import { createDatabase } from '@wh/db'
import { buildChainRegistry, DepositKeyring } from '@wh/wallet'
import type { FastifyInstance } from 'fastify'
import { Redis } from 'ioredis'
import { requireAuth } from '../src/plugins/auth'
import { buildServer } from '../src/server'

const config = loadConfig(processEnv())
const database = createDatabase(config.databaseUrl, { max: 20, appName: 'bench-api' })
const redis = new Redis(config.cacheUrl)
const app = await buildServer({
  config,
  database,
  redis,
  keyring: DepositKeyring.fromMnemonic(config.keys.masterMnemonic).publicOnly(),
  chains: buildChainRegistry(config),
  logger: false,
})
await app.register(async (scope: FastifyInstance) => {
  requireAuth(scope)
  scope.get('/bench/bare', async () => ({ ok: true }))
})
await app.listen({ host: '127.0.0.1', port: config.port })
// the benchmark asks for this process's CPU time to report cost per request
process.on('message', (m) => {
  if (m === 'cpu') process.send?.({ cpu: process.cpuUsage() })
})
process.send?.('ready')
process.on('SIGINT', () => process.exit(0))
