/**
 * Withdrawal benchmark, on a real anvil node, a throwaway Postgres and Redis:
 * withdrawals sent per minute by the `withdrawals-send` tick on the real outbox. N users each
 * hold a USDC deposit and have one `requested` withdrawal (reserved through the ledger in one
 * INSERT, as requestWithdrawal does); the tick runs until every one is `sent` (journaled:
 * withdrawal_sent + gas_spent).
 * The hot wallet is one key per chain, so its sends queue on the outbox's (chain, from) nonce
 * lock: that, not the node, bounds withdrawals per chain.
 *
 * Then the blocking attack (docs/hostile-world.md "Fair queues"): a thousand withdrawals that can
 * never be sent, ahead of a hundred honest ones. Last, what the outbound policy costs per send
 * (docs/hostile-world.md "One policy for every outbound transaction"): its gas plan against the
 * estimate it replaced (fees and estimate side by side, no fee fields, no cap), per destination.
 *
 *   pnpm --filter @wh/worker bench                 (runs deposits.ts, then this: 500 withdrawals)
 *   tsx bench/withdrawals.ts 100                   fewer
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { loadConfig } from '@wh/config'
import { createDatabase, runMigrations } from '@wh/db'
import { appendBatch, type EventInput, reserveWithdrawal } from '@wh/ledger'
import {
  localStackEnv,
  prng,
  randomAddressFrom,
  startChain,
  startPostgres,
  startRedis,
  TEST_MNEMONIC,
} from '@wh/testkit'
import {
  type ChainClients,
  deployTestUsdc,
  planGas,
  rpcOf,
  testSafeProxyAbi,
  testSafeProxyBytecode,
  testSafeSingletonAbi,
  testSafeSingletonBytecode,
  testUsdcAbi,
} from '@wh/wallet'
import { sendWithdrawals, WITHDRAWAL_SEND_BATCH, withdrawalSendDeps } from '@wh/withdrawals'
import { Redis } from 'ioredis'
import {
  type Address,
  createPublicClient,
  createTestClient,
  createWalletClient,
  encodeFunctionData,
  erc20Abi,
  type Hex,
  http,
} from 'viem'
import { mnemonicToAccount } from 'viem/accounts'
import { buildWorkerDeps } from '../src/deps'

const WITHDRAWALS = Number(process.argv[2] ?? 500)
/** overlapping tick runs, like a slow run and the next period's or two replicas (SKIP LOCKED splits rows) */
const CONCURRENT_TICKS = 2
const AMOUNT = 12_000_000n // 12 USDC each

const random = prng(11)
const pg = await startPostgres({ durable: true })
const redisServer = await startRedis()
const chain = await startChain({ chainId: 8453 })
try {
  await runMigrations(pg.url)
  const database = createDatabase(pg.url, { max: 12, appName: 'withdrawals-bench' })
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
  const silent = { info() {}, warn() {} }
  const deps = buildWorkerDeps(
    config,
    { sql: database.sql, redis, log: silent },
    {
      chains: { base: { chainId: chain.chainId, usdc, confirmations: 0 } },
      clientOptions: {
        onFetchRequest: () => {
          httpRequests++
        },
      },
    },
  )
  const base = deps.clients.get('base')
  if (!base) throw new Error('no base clients')
  const mint = await base.walletClient.writeContract({
    account: deployer,
    address: usdc,
    abi: testUsdcAbi,
    functionName: 'mint',
    args: [deps.hotWallet('base').address, AMOUNT * BigInt(WITHDRAWALS)],
    chain: null,
  })
  await base.publicClient.waitForTransactionReceipt({ hash: mint, pollingInterval: 20 })

  // users with a deposit and one requested withdrawal each, as POST /withdrawals leaves them
  const users = Array.from({ length: WITHDRAWALS }, () => randomUUID())
  const deposits: EventInput[] = users.map((userId) => ({
    type: 'deposit_detected',
    payload: {
      userId,
      chain: 'base',
      txHash: `0x${randomBytes(32).toString('hex')}`,
      logIndex: 0,
      currency: 'USDC',
      amount: AMOUNT,
    },
    occurredAt: new Date(),
  }))
  await appendBatch(database.sql, deposits)
  for (const userId of users)
    await reserveWithdrawal(database.sql, {
      userId,
      currency: 'USDC',
      amount: AMOUNT,
      chain: 'base',
      destination: randomAddressFrom(random),
    })

  const sendDeps = withdrawalSendDeps(deps, silent)
  httpRequests = 0
  let ticks = 0
  const t0 = performance.now()
  for (;;) {
    const runs = await Promise.all(Array.from({ length: CONCURRENT_TICKS }, () => sendWithdrawals(sendDeps)))
    ticks += runs.length
    const errors = runs.reduce((s, r) => s + r.errors + r.failed, 0)
    if (errors > 0) throw new Error(`a tick reported ${errors} errors or failures`)
    const [{ left } = { left: 0 }] = await database.sql<{ left: number }[]>`
      select count(*)::int as left from withdrawals where state = 'requested'`
    if (left === 0) break
    if (performance.now() - t0 > 600_000) throw new Error(`${left} withdrawals still requested after 10 minutes`)
  }
  const elapsedMs = performance.now() - t0
  const [{ sent, events } = { sent: 0, events: 0 }] = await database.sql<{ sent: number; events: number }[]>`
    select (select count(*)::int from withdrawals where state = 'sent') as sent,
           (select count(*)::int from ledger_events where type in ('withdrawal_sent', 'gas_spent')) as events`
  if (sent !== WITHDRAWALS || events !== 2 * WITHDRAWALS) throw new Error(`sent ${sent}, events ${events}`)
  const perMinute = Math.round((WITHDRAWALS / elapsedMs) * 60_000)
  console.log(`
Withdrawals sent by the withdrawals-send tick on the real outbox (anvil, confirmations 0,
${CONCURRENT_TICKS} overlapping tick runs of up to ${WITHDRAWAL_SEND_BATCH} rows each, one hot wallet)

| withdrawals | tick runs | HTTP requests | ms per withdrawal | withdrawals per minute |
| ----------: | --------: | ------------: | ----------------: | ---------------------: |
| ${sent.toLocaleString('en-US')} | ${ticks} | ${httpRequests.toLocaleString('en-US')} | ${(elapsedMs / WITHDRAWALS).toFixed(1)} | ${perMinute.toLocaleString('en-US')} |
`)

  // The blocking attack (docs/hostile-world.md "Fair queues"): ATTACKERS accounts each hold the
  // most withdrawals they may (10) of ETH to addresses that refuse it at send time, requested
  // before HONEST ordinary ones. How long the honest ones take, and what a poisoned row costs.
  const ATTACKERS = 100
  const PER_ATTACKER = 10
  const HONEST = 100
  const attackers = Array.from({ length: ATTACKERS }, () => randomUUID())
  const honest = Array.from({ length: HONEST }, () => randomUUID())
  const ethAmount = 5_000_000_000_000_000n // 0.005 ETH
  await appendBatch(database.sql, [
    ...attackers.map((userId) => ({
      type: 'deposit_detected',
      payload: {
        userId,
        chain: 'base',
        txHash: `0x${randomBytes(32).toString('hex')}`,
        logIndex: 0,
        currency: 'ETH',
        amount: ethAmount * BigInt(PER_ATTACKER),
      },
      occurredAt: new Date(),
    })),
    ...honest.map((userId) => ({
      type: 'deposit_detected',
      payload: {
        userId,
        chain: 'base',
        txHash: `0x${randomBytes(32).toString('hex')}`,
        logIndex: 0,
        currency: 'USDC',
        amount: AMOUNT,
      },
      occurredAt: new Date(),
    })),
  ] as EventInput[])
  const mintMore = await base.walletClient.writeContract({
    account: deployer,
    address: usdc,
    abi: testUsdcAbi,
    functionName: 'mint',
    args: [deps.hotWallet('base').address, AMOUNT * BigInt(HONEST)],
    chain: null,
  })
  await base.publicClient.waitForTransactionReceipt({ hash: mintMore, pollingInterval: 20 })
  const anvil = createTestClient({ mode: 'anvil', transport })
  for (const userId of attackers)
    for (let i = 0; i < PER_ATTACKER; i++) {
      const trap = randomAddressFrom(random)
      await anvil.setCode({ address: trap, bytecode: '0x60006000fd' }) // REVERT
      await reserveWithdrawal(database.sql, {
        userId,
        currency: 'ETH',
        amount: ethAmount,
        chain: 'base',
        destination: trap,
      })
    }
  const honestIds: string[] = []
  for (const userId of honest) {
    const destination = randomAddressFrom(random)
    const r = await reserveWithdrawal(database.sql, {
      userId,
      currency: 'USDC',
      amount: AMOUNT,
      chain: 'base',
      destination,
    })
    honestIds.push(r.withdrawalId)
  }
  httpRequests = 0
  let attackTicks = 0
  let honestSentAfter = 0
  const a0 = performance.now()
  const tickMs: number[] = []
  for (;;) {
    const t = performance.now()
    await sendWithdrawals(sendDeps)
    tickMs.push(performance.now() - t)
    attackTicks++
    const [{ waiting, poisoned } = { waiting: 0, poisoned: 0 }] = await database.sql<
      { waiting: number; poisoned: number }[]
    >`
      select count(*) filter (where id = any(${honestIds}::uuid[]) and state <> 'sent')::int as waiting,
             count(*) filter (where currency = 'ETH' and state = 'requested')::int as poisoned
      from withdrawals`
    if (waiting === 0 && honestSentAfter === 0) honestSentAfter = attackTicks
    if (waiting === 0 && poisoned === 0) break
    if (attackTicks > 50) throw new Error(`the attack did not drain: ${waiting} honest, ${poisoned} poisoned left`)
  }
  const attackMs = performance.now() - a0
  const [{ refused } = { refused: 0 }] = await database.sql<{ refused: number }[]>`
    select count(*)::int as refused from withdrawals where last_error_code = 'DESTINATION_REFUSED'`
  if (refused !== ATTACKERS * PER_ATTACKER) throw new Error(`refused ${refused}`)
  console.log(`
The blocking attack: ${(ATTACKERS * PER_ATTACKER).toLocaleString('en-US')} withdrawals to addresses that refuse ETH, from
${ATTACKERS} accounts, requested before ${HONEST} honest ones (one tick run at a time)

| honest sent after | ticks to drain the attack | ms per tick (median) | ms per refused row | HTTP requests per refused row |
| ----------------: | ------------------------: | -------------------: | -----------------: | ----------------------------: |
| ${honestSentAfter} tick(s) | ${attackTicks} | ${Math.round(tickMs.sort((x, y) => x - y)[Math.floor(tickMs.length / 2)] ?? 0)} | ${(attackMs / (ATTACKERS * PER_ATTACKER + HONEST)).toFixed(1)} | ${((httpRequests - HONEST * 5) / (ATTACKERS * PER_ATTACKER)).toFixed(1)} |
`)
  await policyCost(base, deps.hotWallet('base').address, usdc, anvil, () => httpRequests)
  redis.disconnect()
  await database.close()
} finally {
  await chain.stop()
  await redisServer.stop()
  await pg.stop()
}

/**
 * The policy's cost per send: `planGas` (one batched round trip for the block, balance, priority
 * fee and the recipient's code, then the dry run with fee fields and the cap, none for an address
 * without code) against the estimate it replaced (viem's estimateFeesPerGas and estimateGas side
 * by side, no fee fields, no cap), `PLANS` times per destination, one at a time.
 */
async function policyCost(
  base: ChainClients,
  hot: Address,
  usdc: Address,
  anvil: ReturnType<typeof createTestClient>,
  requests: () => number,
): Promise<void> {
  const PLANS = 300
  const c = base.publicClient
  const deployer = mnemonicToAccount(TEST_MNEMONIC)
  const deploy = async (abi: readonly unknown[], bytecode: Hex, args: readonly unknown[] = []) => {
    const hash = await base.walletClient.deployContract({
      account: deployer,
      chain: null,
      abi,
      bytecode,
      args,
    } as never)
    return (await c.waitForTransactionReceipt({ hash, pollingInterval: 20 })).contractAddress as Address
  }
  const safe = await deploy(testSafeProxyAbi, testSafeProxyBytecode, [
    await deploy(testSafeSingletonAbi, testSafeSingletonBytecode),
  ])
  const eoa = randomAddressFrom(random)
  // the hot wallet sent all its USDC above: a transfer's dry run needs some
  const mint = await base.walletClient.writeContract({
    account: deployer,
    chain: null,
    address: usdc,
    abi: testUsdcAbi,
    functionName: 'mint',
    args: [hot, 1_000_000_000n],
  })
  await c.waitForTransactionReceipt({ hash: mint, pollingInterval: 20 })
  await anvil.mine({ blocks: 1 })
  const cases: Array<{ name: string; to: Address; value: bigint; data: Hex | undefined; native: boolean }> = [
    { name: 'ETH to an address without code', to: eoa, value: 10n ** 15n, data: undefined, native: true },
    { name: 'ETH to a Safe-like wallet', to: safe, value: 10n ** 15n, data: undefined, native: true },
    {
      name: 'USDC transfer',
      to: usdc,
      value: 0n,
      data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [eoa, 1_000_000n] }),
      native: false,
    },
  ]
  const rows: string[] = []
  for (const k of cases) {
    const measure = async (fn: () => Promise<unknown>) => {
      const r0 = requests()
      const t0 = performance.now()
      for (let i = 0; i < PLANS; i++) await fn()
      return { ms: (performance.now() - t0) / PLANS, http: (requests() - r0) / PLANS }
    }
    const before = await measure(() =>
      Promise.all([
        c.estimateFeesPerGas({ type: 'eip1559' }),
        c.estimateGas({ account: hot, to: k.to, value: k.value, data: k.data }),
      ]),
    )
    const after = await measure(() =>
      planGas(rpcOf(c), {
        chain: 'base',
        purpose: 'withdrawal',
        from: hot,
        call: { to: k.to, value: k.value, data: k.data },
        kind: 'transfer',
        native: k.native,
      }),
    )
    rows.push(
      `| ${k.name} | ${before.ms.toFixed(2)} | ${before.http.toFixed(1)} | ${after.ms.toFixed(2)} | ${after.http.toFixed(1)} |`,
    )
  }
  console.log(`
What the outbound policy costs per send: its gas plan against the estimate it replaced (${PLANS} each, one at a time)

| destination | before: ms | before: HTTP requests | policy: ms | policy: HTTP requests |
| ----------- | ---------: | --------------------: | ---------: | --------------------: |
${rows.join('\n')}
`)
}
