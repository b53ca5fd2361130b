/**
 * Deposit benchmark, on a real anvil node, a throwaway Postgres and Redis:
 *   1. the deposit-scan tick (scanChainDeposits, as the worker runs it) with 100,000 deposit
 *      addresses loaded from deposit_addresses, over 1,000 blocks of ETH and USDC traffic:
 *      RPC calls, HTTP requests and time per tick, and the address book's own costs;
 *   2. sweeps per minute: USDC deposits at addresses without gas (top-up, then sweep, each through
 *      the outbox), run by 4 concurrent jobs like one worker's deposits queue.
 *
 *   pnpm --filter @wh/worker bench                    1,000 blocks, 100,000 addresses, 200 sweeps
 *   pnpm --filter @wh/worker bench 200 10000 50       smaller: blocks, addresses, sweeps
 */
import { loadConfig } from '@wh/config'
import { createDatabase, runMigrations } from '@wh/db'
import { DepositAddressBook, scanChainDeposits, sweepDeposit, syncDepositAddresses } from '@wh/deposits'
import {
  localStackEnv,
  prng,
  randomAddressFrom,
  rpcBatch,
  startChain,
  startPostgres,
  startRedis,
  TEST_MNEMONIC,
} from '@wh/testkit'
import { DepositKeyring, deployTestUsdc, testUsdcAbi } from '@wh/wallet'
import { Redis } from 'ioredis'
import { type Address, createPublicClient, createWalletClient, type Hex, http, numberToHex } from 'viem'
import { mnemonicToAccount } from 'viem/accounts'
import { buildWorkerDeps } from '../src/deps'

const BLOCKS = Number(process.argv[2] ?? 1_000)
const ADDRESSES = Number(process.argv[3] ?? 100_000)
const SWEEPS = Number(process.argv[4] ?? 200)
/** deposit addresses that receive something: real users derived from the keyring by the tick */
const RECEIVERS = Math.min(1_000, ADDRESSES)
const MAX_TRANSFERS_PER_KIND_PER_BLOCK = 8
const DEPOSIT_SHARE = 0.1
const SENDERS = 10
const SWEEP_CONCURRENCY = 4 // the worker's DEFAULT_CONCURRENCY per queue
const TICK_BLOCKS = 100

const random = prng(7)
const randomAddress = () => randomAddressFrom(random)

const ms = (t: number) => `${Math.round(performance.now() - t).toLocaleString('en-US')}`
const rows: string[][] = []
const row = (...cells: Array<string | number>) => rows.push(cells.map(String))

const pg = await startPostgres({ durable: true })
const redisServer = await startRedis()
const chain = await startChain({ accounts: SENDERS })
try {
  await runMigrations(pg.url)
  const database = createDatabase(pg.url, { max: 12, appName: 'deposits-bench' })
  const redis = new Redis(redisServer.url, { maxRetriesPerRequest: 1 })
  const transport = http(chain.rpcUrl)
  const deployer = mnemonicToAccount(TEST_MNEMONIC)
  const usdc = await deployTestUsdc(
    createWalletClient({ account: deployer, transport }),
    createPublicClient({ transport }),
  )
  const config = loadConfig(
    localStackEnv({
      DATABASE_URL: pg.url,
      CACHE_URL: redisServer.url,
      LOG_LEVEL: 'silent',
      // base's node alone: the benchmark measures one chain
      RPC_URL_BASE: chain.rpcUrl,
    }),
  )
  let httpRequests = 0
  const deps = buildWorkerDeps(
    config,
    { sql: database.sql, redis, log: { info() {}, warn() {} } },
    {
      chains: { base: { chainId: chain.chainId, usdc, confirmations: 0 } },
      clientOptions: {
        onFetchRequest: () => {
          httpRequests++
        },
      },
    },
  )
  const sql = database.sql

  // --- users: RECEIVERS real ones (the tick derives and stores their addresses), the rest
  // synthetic and already in deposit_addresses (deriving 100,000 real ones takes minutes here;
  // the scan's work depends on how many addresses the book holds, not how they were made)
  const receivers = Array.from({ length: RECEIVERS }, (_, i) => 1_000 + i)
  await sql`insert into users (wallet_address, hd_index)
    select '0xa' || lpad(to_hex(i), 39, '0'), i from unnest(${receivers}::int[]) as i`
  await sql`insert into users (wallet_address, hd_index)
    select '0xb' || lpad(to_hex(i), 39, '0'), 10000000 + i from generate_series(1, ${ADDRESSES - RECEIVERS}) as i`
  await sql`insert into deposit_addresses (hd_index, address, user_id)
    select u.hd_index, '0xc' || lpad(to_hex(u.hd_index), 39, '0'), u.id from users u where u.hd_index >= 10000000`
  // a keyring of its own, so the tick's keyring derives the receivers' addresses from cold
  const publicKeyring = DepositKeyring.fromMnemonic(config.keys.masterMnemonic).publicOnly()
  const receiverAddresses = receivers.map((i) => publicKeyring.address(i))

  // --- the chain: BLOCKS blocks with ETH and USDC transfers, DEPOSIT_SHARE of them to receivers
  // not indexes 1–4: the test environment's hot wallet, session, gas wallet and swap keys (the gas
  // wallet's payments are not deposits, and the others' nonces are the service's)
  const senders = [0, 5, 6, 7, 8, 9].map((i) => mnemonicToAccount(TEST_MNEMONIC, { addressIndex: i }))
  const wallet = createWalletClient({ account: deployer, transport })
  const publicClient = createPublicClient({ transport })
  for (const s of senders) {
    const hash = await wallet.writeContract({
      address: usdc,
      abi: testUsdcAbi,
      functionName: 'mint',
      args: [s.address, 10n ** 15n],
      chain: null,
    })
    await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })
  }
  await rpcBatch(chain.rpcUrl, [{ method: 'evm_setAutomine', params: [false] }])
  const fromBlock =
    BigInt(((await rpcBatch(chain.rpcUrl, [{ method: 'eth_blockNumber', params: [] }])) as Hex[])[0] as Hex) + 1n
  let sent = 0
  let toReceivers = 0
  const tBuild = performance.now()
  for (let b = 0; b < BLOCKS; b++) {
    const calls: { method: string; params: unknown[] }[] = []
    for (const kind of ['ETH', 'USDC'] as const) {
      const n = Math.floor(random() * (MAX_TRANSFERS_PER_KIND_PER_BLOCK + 1))
      for (let k = 0; k < n; k++) {
        const ours = random() < DEPOSIT_SHARE
        if (ours) toReceivers++
        const to = ours ? (receiverAddresses[Math.floor(random() * RECEIVERS)] as Address) : randomAddress()
        const from = senders[Math.floor(random() * senders.length)]?.address as Address
        const amount =
          kind === 'ETH'
            ? 10n ** 16n * BigInt(1 + Math.floor(random() * 100))
            : 1_000_000n * BigInt(1 + Math.floor(random() * 1_000))
        calls.push({
          method: 'eth_sendTransaction',
          params: [
            kind === 'ETH'
              ? { from, to, value: numberToHex(amount), gas: numberToHex(21_000) }
              : {
                  from,
                  to: usdc,
                  gas: numberToHex(80_000),
                  data: `0xa9059cbb${to.slice(2).toLowerCase().padStart(64, '0')}${amount.toString(16).padStart(64, '0')}`,
                },
          ],
        })
      }
    }
    sent += calls.length
    if (calls.length > 0) await rpcBatch(chain.rpcUrl, calls)
    await rpcBatch(chain.rpcUrl, [{ method: 'evm_mine', params: [] }])
  }
  await rpcBatch(chain.rpcUrl, [{ method: 'evm_setAutomine', params: [true] }])
  const buildMs = ms(tBuild)
  await sql`insert into chain_cursors (chain, next_block) values ('base', ${fromBlock.toString()})`

  // --- the address book's own costs
  let t = performance.now()
  const firstSync = await syncDepositAddresses(sql, deps.keyring)
  row('address sync, first (derives the real users)', ADDRESSES, '-', '-', firstSync.inserted, ms(t))
  t = performance.now()
  const idleSync = await syncDepositAddresses(sql, deps.keyring)
  row('address sync, nothing missing', ADDRESSES, '-', '-', idleSync.inserted, ms(t))
  const book = new DepositAddressBook()
  t = performance.now()
  await book.refresh(sql)
  row('address book, cold load from deposit_addresses', book.size, '-', '-', '-', ms(t))
  t = performance.now()
  await book.refresh(sql)
  row('address book, incremental refresh (nothing new)', book.size, '-', '-', '-', ms(t))

  // --- the scan ticks: TICK_BLOCKS blocks each, then one tick of all BLOCKS (a replay)
  const scanDeps = { ...deps, addressBook: book }
  let detected = 0
  let rpcCalls = 0
  const before = httpRequests
  const tTicks = performance.now()
  let ticks = 0
  for (;;) {
    const r = await scanChainDeposits(scanDeps, 'base', { maxBlocks: TICK_BLOCKS })
    if (r.status !== 'scanned') break
    ticks++
    detected += r.detected
    rpcCalls += (r.stats?.rpcCalls ?? 0) + 1 // + the tick's own eth_blockNumber
  }
  const ticksMs = performance.now() - tTicks
  row(
    `scan ticks of ${TICK_BLOCKS} blocks (${ticks} ticks, per tick)`,
    book.size,
    Math.round(rpcCalls / ticks),
    Math.round((httpRequests - before) / ticks),
    Math.round(detected / ticks),
    Math.round(ticksMs / ticks),
  )
  const [{ n }] = (await sql`select count(*)::int as n from deposits`) as unknown as [{ n: number }]
  if (n !== toReceivers) throw new Error(`expected ${toReceivers} deposits, recorded ${n}`)

  await sql`update chain_cursors set next_block = ${fromBlock.toString()} where chain = 'base'`
  const beforeReplay = httpRequests
  t = performance.now()
  const replay = await scanChainDeposits(scanDeps, 'base', { maxBlocks: BLOCKS })
  row(
    `one tick of ${BLOCKS} blocks (replay: all duplicates)`,
    book.size,
    (replay.stats?.rpcCalls ?? 0) + 1,
    httpRequests - beforeReplay,
    `${replay.duplicates} dup`,
    ms(t),
  )
  const beforeIdle = httpRequests
  t = performance.now()
  await scanChainDeposits(scanDeps, 'base')
  row('idle tick (up to date)', book.size, 1, httpRequests - beforeIdle, 0, ms(t))

  // --- sweeps per minute: USDC deposits at addresses without gas (top-up + sweep each)
  const pending = await sql<{ id: string }[]>`
    select distinct on (address) id from deposits where token = 'USDC' order by address, created_at limit ${SWEEPS}`
  const queue = pending.map((p) => p.id)
  const beforeSweeps = httpRequests
  const outcomes = new Map<string, number>()
  t = performance.now()
  await Promise.all(
    Array.from({ length: SWEEP_CONCURRENCY }, async () => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
        let outcome = await sweepDeposit(deps, id)
        for (let i = 0; outcome !== 'swept' && i < 5; i++) outcome = await sweepDeposit(deps, id)
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1)
      }
    }),
  )
  const sweepMs = performance.now() - t
  const swept = outcomes.get('swept') ?? 0
  const [{ topups }] = (await sql`
    select count(*)::int as topups from outbound_txs where purpose = 'gas_topup' and state = 'confirmed'`) as unknown as [
    { topups: number },
  ]
  row(
    `sweeps, ${SWEEP_CONCURRENCY} concurrent (${swept} swept, ${topups} top-ups)`,
    '-',
    '-',
    Math.round((httpRequests - beforeSweeps) / Math.max(1, swept)),
    `${Math.round((swept / sweepMs) * 60_000).toLocaleString('en-US')}/min`,
    Math.round(sweepMs / Math.max(1, swept)),
  )

  const header = ['scenario', 'addresses', 'RPC calls', 'HTTP requests', 'deposits', 'ms']
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join(' | ')} |`
  console.log(
    `\nanvil, ${BLOCKS} blocks, ${sent.toLocaleString('en-US')} transactions (${toReceivers} to deposit addresses), built in ${buildMs} ms`,
  )
  console.log(line(header))
  console.log(`| ${widths.map((w, i) => (i === 0 ? '-'.repeat(w) : `${'-'.repeat(w - 1)}:`)).join(' | ')} |`)
  for (const r of rows) console.log(line(r))
  console.log(
    '(per-tick rows: RPC calls, HTTP requests, deposits and ms per tick; sweeps: HTTP requests and ms per sweep)',
  )
  redis.disconnect()
  await database.close()
} finally {
  await chain.stop()
  await redisServer.stop()
  await pg.stop()
}
