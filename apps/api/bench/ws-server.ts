/**
 * The API as the /ws/prices benchmark runs it: the real server, plus one bare public route to
 * compare GET /assets against (it exists only here). Answers 'stats' over IPC with its memory
 * (after a forced GC) and the fan-out hub's counters.
 */
import { loadConfig, processEnv } from '@wh/config'
import { createDatabase } from '@wh/db'
import { buildChainRegistry, DepositKeyring } from '@wh/wallet'
import { Redis } from 'ioredis'
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
  // the fee estimates would call the (absent) chain RPCs: not what is measured here
  marketData: { fees: { feePerGasWei: async () => undefined } },
})
app.get('/bench/bare', async () => ({ ok: true }))
await app.listen({ host: '127.0.0.1', port: config.port, backlog: 4096 })
process.on('message', (m) => {
  if (m !== 'stats') return
  ;(globalThis as { gc?: () => void }).gc?.()
  const mem = process.memoryUsage()
  process.send?.({
    rss: mem.rss,
    heapUsed: mem.heapUsed,
    external: mem.external,
    clients: app.fanout.clientCount,
    dropped: app.fanout.dropped,
    received: app.fanout.received,
    cpu: process.cpuUsage(),
  })
})
process.send?.('ready')
process.on('SIGINT', () => process.exit(0))
