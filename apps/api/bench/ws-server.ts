/**
 * The API as the /ws/prices benchmark runs it: the real server, plus one bare public route to
 * compare GET /assets against (it exists only here). Answers 'stats' over IPC with its memory
 * (after a forced GC) and the fan-out hub's counters; after 'measure' (which answers the same),
 * also its event-loop delay and utilisation, and the delay from the feed's publish to this
 * process's event loop, read by a subscriber of its own (8 messages a second: nothing to measure).
 */
import { monitorEventLoopDelay, performance } from 'node:perf_hooks'
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
const loopDelay = monitorEventLoopDelay({ resolution: 1 })
let elu = performance.eventLoopUtilization()
let hop: number[] | undefined
const PUBLISHED_AT = /"publishedAt":"([^"]+)"/
const probe = new Redis(config.cacheUrl)
await probe.psubscribe('market:prices:*')
/** gaps between consecutive messages (any asset), ms: how far apart ETH and BTC arrive */
let gaps: number[] = []
let lastAt = 0
probe.on('pmessage', (_p: string, _c: string, message: string) => {
  const m = hop && PUBLISHED_AT.exec(message)
  if (m) hop?.push(Date.now() - Date.parse(m[1] as string))
  const now = performance.now()
  if (hop) gaps.push(now - lastAt)
  lastAt = now
})
const ms = (ns: number) => Math.round(ns / 1e4) / 100
process.on('message', (m) => {
  if (m !== 'stats' && m !== 'measure') return
  ;(globalThis as { gc?: () => void }).gc?.()
  const mem = process.memoryUsage()
  const hops = hop ? Float64Array.from(hop).sort() : undefined
  const at = (p: number) => (hops ? (hops[Math.min(hops.length - 1, Math.floor(p * hops.length))] ?? 0) : 0)
  process.send?.({
    loop: hop
      ? {
          p50: ms(loopDelay.percentile(50)),
          p99: ms(loopDelay.percentile(99)),
          max: ms(loopDelay.max),
          utilisation: Math.round(performance.eventLoopUtilization(elu).utilization * 100) / 100,
        }
      : undefined,
    redisHopMs: hops ? { p50: at(0.5), p99: at(0.99), max: at(1), samples: hops.length } : undefined,
    arrivalGapsMs: hop
      ? { within1: gaps.filter((g) => g < 1).length, within5: gaps.filter((g) => g < 5).length, of: gaps.length }
      : undefined,
    rss: mem.rss,
    heapUsed: mem.heapUsed,
    external: mem.external,
    clients: app.fanout.clientCount,
    dropped: app.fanout.dropped,
    received: app.fanout.received,
    batches: app.fanout.batches,
    cpu: process.cpuUsage(),
  })
  if (m === 'measure') {
    hop = []
    gaps = []
    loopDelay.reset()
    loopDelay.enable()
    elu = performance.eventLoopUtilization()
  }
})
process.send?.('ready')
process.on('SIGINT', () => process.exit(0))
