/**
 * Treasury benchmark (docs/chains.md "Treasury"), on a real anvil node, the Derive simulator (v3, with
 * its L1 payer and the outbox stand-in), a throwaway Postgres and Redis: the treasury tick's own
 * paths, timed apart from the exchange's batch and the chain's blocks.
 *
 * - **decide (covered)**: a run that finds the hot wallet covered: the USDC balance (one RPC read),
 *   the requested withdrawals (one SQL sum), the open row (one SQL read); nothing signed.
 * - **decide + sign + store + send**: a run that finds it short: the funding subaccount's balance at the
 *   exchange, the signature, the row stored, `private/withdraw` sent and the row marked sent.
 * - **settle + record**: the run after the payout is final: the batch's status, the receipt and its
 *   `WithdrawalPaid`, `bridged` appended and the row closed in one transaction.
 * - **throttled**: the outbox's throttle on the hot wallet (a 500 USDC bucket): a run that follows the
 *   queued payout (batch, receipt, the id's logs read and summed; pending), and the run that records it
 *   once the simulator's payer has paid the queue off.
 *
 *   pnpm --filter @wh/worker bench     (runs every worker bench; this one: 200 covered runs, 20 refills, 5 throttled)
 *   tsx bench/treasury.ts 50 5 2       fewer
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { loadConfig } from '@wh/config'
import { createDatabase, runMigrations } from '@wh/db'
import { attachL1Payer, startDeriveSimulator, watchL1Deposits, whitelistRecipient } from '@wh/derive-simulator'
import { append, reserveWithdrawal } from '@wh/ledger'
import { localStackEnv, startChain, startPostgres, startRedis, TEST_PRIVATE_KEYS } from '@wh/testkit'
import { runTreasury } from '@wh/treasury'
import {
  deployTestOnchainActionManager,
  deployTestUsdc,
  deployTestWithdrawalOutbox,
  hotWalletUsdc,
  requestedUsdc,
  testOnchainActionManagerAbi,
  testUsdcAbi,
  testWithdrawalOutboxAbi,
} from '@wh/wallet'
import { Redis } from 'ioredis'
import { type Address, createPublicClient, createTestClient, createWalletClient, getAddress, http } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { buildWorkerDeps } from '../src/deps'
import { registerServiceKeys } from '../test/fixtures/platform-funds'

const COVERED_RUNS = Number(process.argv[2] ?? 200)
const REFILLS = Number(process.argv[3] ?? 20)
const THROTTLED = Number(process.argv[4] ?? 5)
const L1 = 11_155_111
const USDC = (n: number) => BigInt(n) * 1_000_000n

const pg = await startPostgres({ durable: true })
const redisServer = await startRedis()
const chain = await startChain({ chainId: L1 })
// the wall clock: the worker signs with its own (system) clock
const sim = await startDeriveSimulator({ chainId: L1, clock: 'wall' })
const stop: (() => Promise<unknown> | unknown)[] = [() => sim.close(), () => chain.stop(), () => redisServer.stop()]
try {
  await runMigrations(pg.url)
  const database = createDatabase(pg.url, { max: 6, appName: 'treasury-bench' })
  stop.unshift(() => database.close())
  const transport = http(chain.rpcUrl)
  const deployer = privateKeyToAccount(TEST_PRIVATE_KEYS[0])
  const walletClient = createWalletClient({ account: deployer, transport })
  const publicClient = createPublicClient({ transport })
  const anvil = createTestClient({ mode: 'anvil', transport })
  const write = async (address: Address, abi: unknown, functionName: string, args: unknown[]) => {
    const hash = await walletClient.writeContract({ address, abi, functionName, args, chain: null } as never)
    await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })
  }

  // the v3 world: USDC, the manager and outbox stand-ins, a funding subaccount holding 50,000 USDC
  const usdc = getAddress(await deployTestUsdc(walletClient, publicClient))
  const res = await fetch(`${sim.v3HttpUrl}/public/get_currency`, { method: 'POST', body: '{"currency":"USDC"}' })
  const asset = getAddress(
    ((await res.json()) as { result: { spot: { address: Address }[] } }).result.spot[0]?.address ?? '0x',
  )
  const manager = await deployTestOnchainActionManager(walletClient, publicClient, [{ asset, token: usdc }])
  const operatorKey = generatePrivateKey()
  await anvil.setBalance({ address: privateKeyToAccount(operatorKey).address, value: 10n ** 20n })
  const outbox = await deployTestWithdrawalOutbox(walletClient, publicClient, {
    verifiableApp: privateKeyToAccount(operatorKey).address,
    manager,
    assets: [{ asset, token: usdc, decimals: 6 }],
  })
  const env = localStackEnv({})
  const owner = getAddress(env.EXCHANGE_WALLET_ADDRESS as string)
  registerServiceKeys(sim, env)
  const watcher = watchL1Deposits(sim.engine, { rpcUrl: chain.rpcUrl, manager, confirmations: 0, pollMs: 0 })
  await write(usdc, testUsdcAbi, 'mint', [deployer.address, USDC(50_000)])
  await write(usdc, testUsdcAbi, 'approve', [manager, USDC(50_000)])
  await write(manager, testOnchainActionManagerAbi, 'depositToNewSubaccount', [asset, USDC(50_000), 1, owner])
  await watcher.poll()
  await watcher.stop()
  const funding = [...sim.engine.subaccounts.values()].find((s) => s.wallet === owner && s.label !== 'fallback')?.id
  registerServiceKeys(sim, env, funding)
  const payer = attachL1Payer(sim.engine, {
    rpcUrl: chain.rpcUrl,
    outbox,
    operatorKey,
    confirmations: 0,
    pollMs: 0,
    feeUsd: '0.5',
  })
  stop.unshift(() => payer.stop())

  const config = loadConfig(
    localStackEnv({
      DATABASE_URL: pg.url,
      CACHE_URL: redisServer.url,
      LOG_LEVEL: 'silent',
      RPC_URL_ETHEREUM: chain.rpcUrl,
      EXCHANGE_CHAIN_ID: String(L1),
      EXCHANGE_HTTP_URL: sim.v3HttpUrl,
      EXCHANGE_WS_URL: sim.v3WsUrl,
      EXCHANGE_FUNDING_SUBACCOUNT_ID: String(funding),
      EXCHANGE_DEPOSIT_MANAGER_ADDRESS: manager,
      EXCHANGE_WITHDRAWAL_OUTBOX_ADDRESS: outbox,
      BRIDGE_RETAIN_USDC: '1000',
      TREASURY_FLOOR_USDC: '500',
    }),
  )
  const redis = new Redis(redisServer.url, { maxRetriesPerRequest: 1 })
  stop.unshift(() => redis.disconnect())
  const silent = { info() {}, warn() {} }
  const built = buildWorkerDeps(
    config,
    { sql: database.sql, redis, log: silent },
    { chains: { ethereum: { chainId: L1, usdc, confirmations: 0 } } },
  )
  // this world is L1 only: the L2s' RPC URLs are unreachable placeholders (testkit's localStackEnv), whose
  // retries would be timed in every run's L2 demand instead of the treasury's own work
  const l1 = built.clients.get('ethereum')
  if (!l1) throw new Error('no Ethereum client')
  const deps = { ...built, clients: new Map([['ethereum', l1]]) as typeof built.clients }
  const hot = getAddress(deps.hotWallet('ethereum').address)
  whitelistRecipient(sim.engine, owner, hot)
  await write(usdc, testUsdcAbi, 'mint', [hot, USDC(1_200)])

  /** a requested USDC withdrawal on Ethereum leaving the hot wallet 100 USDC free: the next run is short */
  const drain = async () => {
    const free = (await hotWalletUsdc(deps, 'ethereum')) - (await requestedUsdc(deps, 'ethereum'))
    const amount = free - USDC(100)
    const userId = randomUUID()
    await append(database.sql, {
      type: 'deposit_detected',
      payload: {
        userId,
        chain: 'ethereum',
        txHash: `0x${randomBytes(32).toString('hex')}`,
        logIndex: 0,
        currency: 'USDC',
        amount,
      },
      occurredAt: new Date(),
    })
    await database.sql.begin(async (tx) => {
      const r = await reserveWithdrawal(tx, { userId, currency: 'USDC', amount })
      await tx`update withdrawals set chain = 'ethereum', destination = ${hot} where id = ${r.withdrawalId}`
    })
  }
  const timed = async <T>(f: () => Promise<T>): Promise<[T, number]> => {
    const t0 = performance.now()
    const r = await f()
    return [r, performance.now() - t0]
  }

  const covered: number[] = []
  for (let i = 0; i < COVERED_RUNS; i++) {
    const [r, ms] = await timed(() => runTreasury(deps))
    if (r.status !== 'idle') throw new Error(`expected idle, got ${r.status}`)
    covered.push(ms)
  }
  const start: number[] = []
  const record: number[] = []
  for (let i = 0; i < REFILLS; i++) {
    await drain()
    const [sent, msSend] = await timed(() => runTreasury(deps))
    if (sent.status !== 'pending') throw new Error(`expected pending, got ${JSON.stringify(sent)}`)
    while (payer.pending() > 0) await payer.poll() // the exchange's batch: submitted, then settled once mined
    const [done, msRecord] = await timed(() => runTreasury(deps))
    if (done.status !== 'refilled') throw new Error(`expected refilled, got ${JSON.stringify(done)}`)
    start.push(msSend)
    record.push(msRecord)
  }
  // the throttle: 500 USDC at once, 10 a second; a 900 refill pays 500 and queues the rest
  await write(outbox, testWithdrawalOutboxAbi, 'setBucketLimit', [hot, asset, USDC(500), USDC(10)])
  const queued = () =>
    publicClient.readContract({
      address: outbox,
      abi: testWithdrawalOutboxAbi,
      functionName: 'queueLength',
      args: [hot, asset],
    })
  const follow: number[] = []
  const recordQueued: number[] = []
  for (let i = 0; i < THROTTLED; i++) {
    await drain()
    const sent = await runTreasury(deps)
    if (sent.status !== 'pending') throw new Error(`expected pending, got ${JSON.stringify(sent)}`)
    while (payer.pending() > 0) await payer.poll()
    const [waiting, msFollow] = await timed(() => runTreasury(deps))
    if (waiting.status !== 'pending') throw new Error(`expected pending (queued), got ${JSON.stringify(waiting)}`)
    while ((await queued()) > 0n) {
      await anvil.increaseTime({ seconds: 60 })
      await anvil.mine({ blocks: 1 })
      await payer.poll() // the keeper: processQueue
    }
    const [done, msRecord] = await timed(() => runTreasury(deps))
    if (done.status !== 'refilled') throw new Error(`expected refilled, got ${JSON.stringify(done)}`)
    follow.push(msFollow)
    recordQueued.push(msRecord)
  }
  const stats = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b)
    const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? 0
    return `${(xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(1)} ms mean, p50 ${q(0.5).toFixed(1)}, p95 ${q(0.95).toFixed(1)}`
  }
  console.log(`
treasury tick (v3), anvil + simulator + Postgres + Redis on this machine
  decide, covered (${COVERED_RUNS} runs):                ${stats(covered)}
  decide + sign + store + send (${REFILLS} refills):   ${stats(start)}
  settle + record: bridged + row (${REFILLS} refills): ${stats(record)}
  throttled, follow while queued (${THROTTLED}):         ${stats(follow)}
  throttled, record once paid off (${THROTTLED}):        ${stats(recordQueued)}
`)
} finally {
  for (const s of stop) await s()
  await pg.stop()
}
