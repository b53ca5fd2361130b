/**
 * Solvency run benchmark (docs/solvency.md "Continuous solvency"), on one anvil node per chain with
 * its TestUSDC (the users' deposits on Ethereum's), the Derive simulator over HTTP, a throwaway durable Postgres and Redis: 100,000 users,
 * each owed a balance in the journal (a deposit_detected each), 1,000 of them with a deposit not
 * swept yet (ETH and USDC at their addresses), and 1,000 subaccounts at the exchange. It runs
 * runSolvency as the tick does and prints, per run: deposit addresses read, JSON-RPC calls and HTTP
 * requests to the chain, calls to the exchange, the liabilities query and the whole run in ms.
 *
 *   pnpm --filter @wh/worker exec tsx bench/solvency.ts                 100,000 users, 1,000 active
 *   pnpm --filter @wh/worker exec tsx bench/solvency.ts 20000 200       smaller: users, active
 */
import { randomBytes } from 'node:crypto'
import { loadConfig } from '@wh/config'
import { createDatabase, runMigrations } from '@wh/db'
import { startDeriveSimulator } from '@wh/derive-simulator'
import { appendBatch, type EventInput, liabilityTotals } from '@wh/ledger'
import { runSolvency, solvencyDeps } from '@wh/solvency'
import {
  localChainsEnv,
  localStackEnv,
  rpcBatch,
  startLocalChains,
  startPostgres,
  startRedis,
  TEST_PRIVATE_KEYS,
} from '@wh/testkit'
import { deployTestUsdcs, testUsdcAbi } from '@wh/wallet'
import { Redis } from 'ioredis'
import { encodeFunctionData, numberToHex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { buildWorkerDeps } from '../src/deps'
import { platformFunds } from '../test/fixtures/platform-funds'

const USERS = Number(process.argv[2] ?? 100_000)
const ACTIVE = Math.min(Number(process.argv[3] ?? 1_000), USERS)
const SUBACCOUNTS = ACTIVE
const USDC_DEPOSIT = 250_000_000n
const fmt = (n: number) => Math.round(n).toLocaleString('en-US')

const pg = await startPostgres({ durable: true })
const redisServer = await startRedis()
const chains = await startLocalChains()
const chain = chains.ethereum
// the wall clock: the run signs its reads with the worker's (system) clock, and setting up 100,000 users takes minutes
const sim = await startDeriveSimulator({ chainId: 901, clock: 'wall' })
try {
  await runMigrations(pg.url)
  const deployer = privateKeyToAccount(TEST_PRIVATE_KEYS[0])
  const usdcs = await deployTestUsdcs(chains, TEST_PRIVATE_KEYS[0])
  const usdc = usdcs.ethereum
  const database = createDatabase(pg.url, { max: 12, appName: 'solvency-bench' })
  const redis = new Redis(redisServer.url, { maxRetriesPerRequest: 1 })
  const env = {
    DATABASE_URL: pg.url,
    CACHE_URL: redisServer.url,
    LOG_LEVEL: 'silent',
    ...localChainsEnv(chains, usdcs),
  }
  // the platform's USDC in its funding subaccount (one more portfolio in get_all_portfolios)
  const platform = platformFunds(sim, { USDC: '1000000' }, env)
  const config = loadConfig(localStackEnv({ ...env, ...platform.env }))
  let httpRequests = 0
  let rpcCalls = 0
  const deps = buildWorkerDeps(
    config,
    { sql: database.sql, redis, log: { info() {}, warn() {} } },
    {
      clientOptions: {
        onFetchRequest: async (request) => {
          httpRequests++
          const body = JSON.parse(await request.clone().text()) as unknown
          rpcCalls += Array.isArray(body) ? body.length : 1
        },
      },
    },
  )
  const sql = database.sql
  const wallet = config.exchange.walletAddress

  // --- 100,000 users, each owed a deposit in the journal
  const t = performance.now()
  await sql`insert into users (wallet_address, hd_index)
    select '0xb' || lpad(to_hex(i), 39, '0'), i from generate_series(1, ${USERS}) as i`
  const users = await sql<{ id: string; hd_index: number }[]>`select id, hd_index from users order by hd_index`
  for (let i = 0; i < users.length; i += 5_000) {
    const events: EventInput[] = users.slice(i, i + 5_000).map((u) => ({
      type: 'deposit_detected',
      payload: {
        userId: u.id,
        chain: 'base',
        txHash: `0x${randomBytes(32).toString('hex')}`,
        logIndex: 0,
        currency: 'USDC',
        amount: USDC_DEPOSIT,
      },
      occurredAt: new Date(),
    }))
    await appendBatch(sql, events)
  }
  // --- 1,000 of them with a deposit not swept yet: the USDC and some ETH at their own address
  const active = users.slice(-ACTIVE).map((u) => ({ ...u, address: deps.keyring.address(u.hd_index) }))
  const nonce0 = Number(
    (await rpcBatch(chain.rpcUrl, [{ method: 'eth_getTransactionCount', params: [deployer.address, 'pending'] }]))[0],
  )
  await rpcBatch(
    chain.rpcUrl,
    active.flatMap((a, i) => [
      {
        method: 'eth_sendTransaction',
        params: [
          {
            from: deployer.address,
            nonce: numberToHex(nonce0 + i),
            to: usdc,
            data: encodeFunctionData({ abi: testUsdcAbi, functionName: 'mint', args: [a.address, USDC_DEPOSIT] }),
          },
        ],
      },
      { method: 'anvil_setBalance', params: [a.address, numberToHex(10n ** 15n)] },
    ]),
  )
  await rpcBatch(chain.rpcUrl, [{ method: 'anvil_mine', params: [numberToHex(2)] }])
  await sql`
    insert into deposits (chain, tx_hash, log_index, block_number, user_id, hd_index, address, token, amount, state)
    select 'ethereum', '0x' || lpad(to_hex(x.hd_index), 64, '0'), 0, 1, x.id, x.hd_index, x.address, 'USDC',
      ${USDC_DEPOSIT.toString()}, 'detected'
    from jsonb_to_recordset(${sql.json(active)}::jsonb) as x(id uuid, hd_index int, address text)`
  // --- 1,000 subaccounts at the exchange
  for (let i = 0; i < SUBACCOUNTS; i++) sim.control.openSubaccount(wallet, { USDC: '100', ETH: '0.01' })
  const setupMs = performance.now() - t

  const rows: string[][] = []
  for (const label of ['run 1', 'run 2', 'run 3']) {
    const before = { httpRequests, rpcCalls }
    const q = performance.now()
    await liabilityTotals(sql)
    const liabilitiesMs = performance.now() - q
    const start = performance.now()
    const r = await runSolvency(solvencyDeps(deps))
    const ms = performance.now() - start
    if (!r.complete) throw new Error(`incomplete run: ${JSON.stringify(r.errors)}`)
    rows.push([
      label,
      fmt(r.depositAddresses),
      fmt(rpcCalls - before.rpcCalls),
      fmt(httpRequests - before.httpRequests),
      fmt(liabilitiesMs),
      fmt(ms),
    ])
  }
  const header = ['run', 'deposit addresses read', 'chain RPC calls', 'chain HTTP requests', 'liabilities ms', 'run ms']
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join(' | ')} |`
  console.log(
    `\nsolvency: ${fmt(USERS)} users owed in the journal, ${fmt(ACTIVE)} deposit addresses in flight, ${fmt(SUBACCOUNTS)} subaccounts at the exchange (one get_all_portfolios call, 3 wallet reads per run; set up in ${fmt(setupMs)} ms)`,
  )
  console.log(line(header))
  console.log(`| ${widths.map((w, i) => (i === 0 ? '-'.repeat(w) : `${'-'.repeat(w - 1)}:`)).join(' | ')} |`)
  for (const r of rows) console.log(line(r))
  redis.disconnect()
  await database.close()
} finally {
  await sim.close()
  await chains.stop()
  await redisServer.stop()
  await pg.stop()
}
