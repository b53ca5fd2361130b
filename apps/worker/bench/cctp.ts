/**
 * The L2 route benchmark (docs/chains.md "The L2 route" → "What it costs"): from a USDC deposit on an L2 to the
 * money credited in the exchange's funding subaccount, on the local stack (four anvil nodes with CCTP's stand-ins,
 * the local attester answering at once, the Derive simulator, a throwaway durable Postgres and Redis). Each
 * deposit goes through the service's own steps back to back, the ticks called as their schedulers would call them:
 *
 *   deposit mined → detected (the L2's scan) → swept (the sweep) → burned, attested, minted on L1 and journaled
 *   (the L2's bridge tick: runCctpSweep) → deposited on L1 into the funding subaccount (the L1's bridge tick) →
 *   credited by the exchange (the simulator's watcher)
 *
 * and the table gives each step's time and the whole. What it leaves out is waiting: for the ticks' periods (scan 5 s,
 * sweep 10 s, each bridge 60 s: up to ~135 s more in the local run) and, on mainnet, for Circle (docs/chains.md).
 *
 *   pnpm --filter @wh/worker bench      (runs every worker bench; this one: 3 rounds over the three L2s)
 *   tsx bench/cctp.ts 5                 five rounds
 */
import { randomBytes } from 'node:crypto'
import { L2_CHAIN_NAMES, loadConfig } from '@wh/config'
import { createDatabase, runMigrations } from '@wh/db'
import { addressBookFor, scanChainDeposits, sweepDeposit } from '@wh/deposits'
import { localStackEnv, startPostgres, startRedis } from '@wh/testkit'
import { bridgeAdapterFor, cctpDepsOf, L1, runBridge, runCctpSweep } from '@wh/treasury'
import { registerPlatformWallets } from '@wh/wallet'
import { Redis } from 'ioredis'
import { getAddress } from 'viem'
import { buildWorkerDeps } from '../src/deps'
import { startCctpWorld, USDC } from '../test/fixtures/cctp-world'

const ROUNDS = Number(process.argv[2] ?? 3)
const STEPS = ['detected', 'swept', 'burned → minted on L1', 'deposited on L1', 'credited at the exchange'] as const

const pg = await startPostgres({ durable: true })
const redisServer = await startRedis()
const world = await startCctpWorld()
try {
  await runMigrations(pg.url)
  const database = createDatabase(pg.url, { max: 6, appName: 'cctp-bench' })
  const redis = new Redis(redisServer.url, { maxRetriesPerRequest: 1 })
  const config = loadConfig(
    localStackEnv({
      ...world.env,
      DATABASE_URL: pg.url,
      CACHE_URL: redisServer.url,
      LOG_LEVEL: 'silent',
      BRIDGE_RETAIN_USDC: '0',
      L2_TARGETS: 'optimism:0:1:5:50000,base:0:1:5:50000,arbitrum:0:1:5:50000',
    }),
  )
  const deps = buildWorkerDeps(config, { sql: database.sql, redis, log: { info() {}, warn() {} } })
  await registerPlatformWallets(database.sql, deps.platformWallets)
  const sql = database.sql
  const cctp = { ...cctpDepsOf(deps), redis }
  const scanDeps = { ...deps, addressBook: addressBookFor(deps) }
  const rows: { chain: string; ms: number[] }[] = []
  let hd = 1000
  for (let round = 0; round < ROUNDS; round++)
    for (const chain of L2_CHAIN_NAMES) {
      const hdIndex = hd++
      const [u] = await sql<{ id: string }[]>`
        insert into users (wallet_address, hd_index) values (${getAddress(`0x${randomBytes(20).toString('hex')}`)}, ${hdIndex})
        returning id`
      const funding0 = world.fundingUsdc()
      await world.mint(chain, deps.keyring.address(hdIndex), USDC(100 + round))
      const marks = [performance.now()]
      for (let i = 0; i < 10 && (await scanChainDeposits(scanDeps, chain)).status === 'scanned'; i++);
      marks.push(performance.now())
      const [d] = await sql<{ id: string }[]>`select id from deposits where user_id = ${u?.id as string}`
      for (let i = 0; i < 10 && (await sweepDeposit(deps, d?.id as string)) !== 'swept'; i++);
      marks.push(performance.now())
      let r = await runCctpSweep(cctp, chain)
      for (let i = 0; i < 10 && r.state === 'pending'; i++) r = await runCctpSweep(cctp, chain)
      if (r.state !== 'done') throw new Error(`the L2 route did not finish: ${JSON.stringify(r)}`)
      marks.push(performance.now())
      const l1 = await runBridge(deps, bridgeAdapterFor(deps), L1)
      if (l1.status !== 'bridged') throw new Error(`the L1 deposit did not go: ${JSON.stringify(l1)}`)
      marks.push(performance.now())
      for (let i = 0; i < 50 && world.fundingUsdc() === funding0; i++) await world.watcher.poll()
      marks.push(performance.now())
      rows.push({ chain, ms: marks.slice(1).map((m, i) => m - (marks[i] as number)) })
    }
  const fmt = (n: number) => n.toFixed(0).padStart(8)
  console.log(`\nL2 deposit → funded at the exchange (${rows.length} deposits, ticks back to back; ms)\n`)
  console.log(`| chain    | ${STEPS.map((s) => s.padStart(8)).join(' | ')} |    total |`)
  console.log(`| -------- | ${STEPS.map((s) => '-'.repeat(Math.max(8, s.length))).join(' | ')} | -------: |`)
  for (const r of rows)
    console.log(
      `| ${r.chain.padEnd(8)} | ${r.ms.map((m, i) => fmt(m).padStart(STEPS[i]?.length ?? 8)).join(' | ')} | ${fmt(r.ms.reduce((a, b) => a + b, 0))} |`,
    )
  const totals = rows.map((r) => r.ms.reduce((a, b) => a + b, 0)).sort((a, b) => a - b)
  const mean = totals.reduce((a, b) => a + b, 0) / totals.length
  console.log(
    `\nwhole path: mean ${mean.toFixed(0)} ms, p50 ${totals[Math.floor(totals.length / 2)]?.toFixed(0)} ms, max ${totals.at(-1)?.toFixed(0)} ms`,
  )
  redis.disconnect()
  await database.close()
} finally {
  await world.close()
  await redisServer.stop()
  await pg.stop()
}
process.exit(0)
