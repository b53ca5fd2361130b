/**
 * The accelerated demo (apps/worker/demo/demo.ts) in CI: the real API (buildServer, over
 * HTTP), the real worker runtime (every tick, BullMQ, WORKER_CLOCK=exchange exactly as the local run
 * sets it), one anvil per chain with its TestUSDC (docs/chains.md "Local run: four chains"), the Derive simulator on the wall clock, the integration suite's
 * Postgres and Redis. A new user signs in, deposits, starts the wheel; the put is sold, expires out
 * of the money and settles, the runner opens the next leg; a withdrawal is sent on chain. The deposit is made on
 * base and reaches the exchange over CCTP (the stand-ins and the local attester); the withdrawal is paid on arbitrum,
 * whose hot wallet the treasury refilled from L1 (docs/chains.md "The L2 route", "Rebalancing").
 *
 * The worker speaks Derive v3: the bridge deposits on L1 through the OnchainActionManager stand-in into
 * the platform's funding subaccount (opened by a first deposit, as the local run's setup does), the
 * simulator's L1 watcher credits it, and the simulator charges Derive's subaccount-creation fee, which
 * the first funding pays (docs/exchange-v3.md).
 */
import { randomUUID } from 'node:crypto'
import { LOCAL_ATTESTER_ADDRESS, type RunningAttester, startCctpAttester } from '@wh/attester'
import { FollowedClock, toBaseUnits } from '@wh/core'
import { type RunningSimulator, startDeriveSimulator } from '@wh/derive-simulator'
import { QUEUE_KEYS, QUEUES } from '@wh/jobs'
import { balanceOf, userTransit } from '@wh/ledger'
import {
  integrationContext,
  type LocalChains,
  localChainsEnv,
  startLocalChains,
  TEST_PRIVATE_KEYS,
  testEnv,
} from '@wh/testkit'
import { bridgeAdapterFor } from '@wh/treasury'
import { CCTP_DOMAINS, CHAIN_NAMES, type ChainName, DepositKeyring, deployTestUsdcs, setUpLocalCctp } from '@wh/wallet'
import { Queue } from 'bullmq'
import { Redis } from 'ioredis'
import { type Address, createPublicClient, createWalletClient, getAddress, type Hex, http } from 'viem'
import { english, generateMnemonic, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { setUpLocalV3 } from '../../../packages/wallet/scripts/local-v3'
import { buildServer } from '../../api/src/server'
import { DEFAULT_DEMO_AMOUNTS, type DemoReport, formatStatement, NEXT_PUT_DELTA_BPS, runDemo } from '../demo/demo'
import { clockSyncedTicks } from '../src/clock-sync'
import { buildWorkerDeps } from '../src/deps'
import { ticks } from '../src/jobs/index'
import { type Runtime, startRuntime } from '../src/runtime'
import type { WorkerDeps } from '../src/ticks'
import { SIM_CREATION_FEE_USD } from './fixtures/exchange-stack'
import { registerServiceKeys } from './fixtures/platform-funds'

const silent = { info() {}, warn() {} }
const SIWE_DOMAIN = 'demo.example.test'
/** the whole demo must fit well inside the suite's 60 s per test */
const DEMO_BUDGET_MS = 45_000

describe('the accelerated demo: deposit → wheel → withdrawal', () => {
  let chains: LocalChains
  let usdcByChain: Record<ChainName, `0x${string}`>
  let attester: RunningAttester
  let sim: RunningSimulator
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  let app: Awaited<ReturnType<typeof buildServer>>
  let apiUrl: string
  let usdc: `0x${string}`
  let deps: WorkerDeps
  let runtime: Runtime
  const redisConnections: Redis[] = []
  let queues: Queue[] = []
  const bullPrefix = `wh-demo-${randomUUID()}`

  beforeAll(async () => {
    // the local run's nodes and TestUSDCs, dev account 0 holding 1,000,000 on each (local-stack.ts)
    chains = await startLocalChains()
    const usdcs = await deployTestUsdcs(chains, TEST_PRIVATE_KEYS[0], { mint: 1_000_000n * 10n ** 6n })
    usdcByChain = usdcs
    // the demo deposits on base: its USDC reaches the exchange over CCTP (the stand-ins, the local attester)
    usdc = usdcs.base
    const cctp = await setUpLocalCctp(chains, usdcs, {
      funderKey: TEST_PRIVATE_KEYS[0],
      attester: LOCAL_ATTESTER_ADDRESS,
    })
    attester = await startCctpAttester()
    attester.watch(
      CHAIN_NAMES.map((c) => ({
        domain: CCTP_DOMAINS[c],
        rpcUrl: chains[c].rpcUrl,
        transmitter: cctp.messageTransmitter,
      })),
    )
    const transport = http(chains.ethereum.rpcUrl)
    const deployer = createWalletClient({ account: privateKeyToAccount(TEST_PRIVATE_KEYS[0]), transport })
    const publicClient = createPublicClient({ transport })

    // the exchange as the local run has it: the simulator on the wall clock, the platform's wallet
    // registered with its session key (packages/wallet/scripts/local-stack.ts), nothing funded by hand
    sim = await startDeriveSimulator({ chainId: 901, clock: 'wall', subaccountCreationFeeUsd: SIM_CREATION_FEE_USD })
    ctx = await integrationContext({
      ...(await openFundingSubaccount(deployer, publicClient, usdcs.ethereum)),
      ...localChainsEnv(chains, usdcs),
      CCTP_ATTESTATION_URL: attester.url,
      CCTP_TOKEN_MESSENGER_LOCAL: cctp.tokenMessenger,
      CCTP_MESSAGE_TRANSMITTER_LOCAL: cctp.messageTransmitter,
      // deposit addresses of their own (the test mnemonic's first indexes are the node's funded accounts)
      MASTER_MNEMONIC: generateMnemonic(english),
      SIWE_DOMAIN,
      AUTH_RATE_LIMIT_PER_MINUTE: '100000',
      TRADING_PROFILE: 'balanced',
      WHEEL_ENABLED: 'true',
      WORKER_CLOCK: 'exchange',
      BRIDGE_RETAIN_USDC: '100',
    })
    const { config } = ctx
    // the service's keys with exactly their duties, as the local run registers them
    registerServiceKeys(sim, ctx.env, config.exchange.fundingSubaccountId)

    // the worker, as main.ts builds it: deps from the config, every tick, each job on the exchange's time
    const redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1, keyPrefix: `${bullPrefix}:` })
    const connection = new Redis(inject('redisUrl'), { maxRetriesPerRequest: null })
    redisConnections.push(redis, connection)
    deps = buildWorkerDeps(config, { sql: ctx.database.sql, redis, log: silent })
    runtime = await startRuntime({
      connection,
      ticks: clockSyncedTicks(ticks, deps.clock),
      consume: QUEUE_KEYS,
      prefix: bullPrefix,
      log: silent,
      deps,
    })

    // the API, as its main.ts builds it (the local run gives it the worker's exchange settings), with
    // the queues its 202s add their jobs to (docs/architecture.md "Accepted work: one job per 202")
    const apiRedis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 })
    redisConnections.push(apiRedis)
    queues = Object.values(QUEUES).map(
      (name) => new Queue(name, { connection: apiRedis.duplicate({ maxRetriesPerRequest: null }), prefix: bullPrefix }),
    )
    app = await buildServer({
      config,
      database: ctx.database,
      redis: apiRedis,
      keyring: DepositKeyring.fromMnemonic(config.keys.masterMnemonic).publicOnly(),
      chains: deps.registry,
      queues,
      logger: false,
    })
    await app.listen({ host: '127.0.0.1', port: 0 })
    const addr = app.server.address()
    apiUrl = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`
  })

  /**
   * The money in, set up as the local run does (packages/wallet/scripts/local-v3.ts): the manager
   * stand-in, the simulator watching it, and the funding subaccount opened by a first deposit for the
   * platform's owner. Answers the worker's exchange settings.
   */
  async function openFundingSubaccount(
    walletClient: Parameters<typeof setUpLocalV3>[0]['walletClient'],
    publicClient: Parameters<typeof setUpLocalV3>[0]['publicClient'],
    token: Address,
  ): Promise<Record<string, string>> {
    const v3 = await setUpLocalV3({
      walletClient,
      publicClient,
      rpcUrl: chains.ethereum.rpcUrl,
      simulatorUrl: sim.httpUrl,
      usdc: token,
      owner: getAddress(testEnv().EXCHANGE_WALLET_ADDRESS as string),
      hotWallet: privateKeyToAccount(testEnv().MASTER_PRIVATE_KEY as Hex).address,
    })
    return {
      EXCHANGE_HTTP_URL: sim.v3HttpUrl,
      EXCHANGE_WS_URL: sim.v3WsUrl,
      EXCHANGE_DEPOSIT_MANAGER_ADDRESS: v3.depositManager,
      EXCHANGE_WITHDRAWAL_OUTBOX_ADDRESS: v3.withdrawalOutbox,
      EXCHANGE_FUNDING_SUBACCOUNT_ID: String(v3.fundingSubaccountId),
    }
  }

  afterAll(async () => {
    await app?.close()
    await Promise.allSettled(queues.map((q) => q.close()))
    await runtime?.close()
    for (const r of redisConnections) r.disconnect()
    await ctx?.database.close()
    await sim?.close()
    await attester?.close()
    await chains?.stop()
  })

  it('signs a new key in, credits its deposit, sells one put that expires out of the money, opens the next leg and sends a withdrawal', async () => {
    expect(deps.clock).toBeInstanceOf(FollowedClock)
    const lines: string[] = []
    const startedMs = performance.now()
    const report: DemoReport = await runDemo({
      apiUrl,
      siweDomain: SIWE_DOMAIN,
      // the exchange's base as the local run's scripts/demo.ts passes it (…/v3 on v3)
      simulatorUrl: ctx.config.exchange.httpUrl,
      // a deposit on base, a withdrawal on arbitrum (its hot wallet refilled from L1 first)
      rpcUrl: chains.base.rpcUrl,
      usdc,
      withdrawal: { chain: 'arbitrum', rpcUrl: chains.arbitrum.rpcUrl, usdc: usdcByChain.arbitrum },
      funderKey: TEST_PRIVATE_KEYS[0],
      bull: { redisUrl: inject('redisUrl'), prefix: bullPrefix },
      databaseUrl: ctx.config.databaseUrl,
      stepTimeoutMs: 20_000,
      log: (l) => lines.push(l),
    })
    const wallMs = performance.now() - startedMs
    if (process.env.DEMO_LOG) console.log(`${lines.join('\n')}\n\n${formatStatement(report)}`)
    expect(wallMs).toBeLessThan(DEMO_BUDGET_MS)

    const { depositUsdc, wheelUsdc, withdrawUsdc } = DEFAULT_DEMO_AMOUNTS
    expect(report.steps.map((s) => s.name)).toEqual([
      'signed in',
      'deposit address',
      'deposit sent',
      'deposit credited',
      'deposit swept',
      'burned (CCTP)',
      'attested and minted',
      'deposited to the exchange',
      'quote',
      'wheel started',
      'put placed',
      'settings changed',
      'clock: window over',
      'put sold',
      'clock: past expiry',
      'put expired',
      'next leg opened',
      'withdrawal requested',
      'hot wallet refilled',
      'withdrawal sent',
    ])
    // the exchange's clock (and the worker's with it) went past the put's expiry
    const expiry = Date.parse(report.firstLeg.expiry ?? '')
    expect(Date.parse(report.steps.at(-1)?.exchangeTime ?? '')).toBeGreaterThan(expiry)

    // one OTM put cycle: premium kept, no settlement cost, the next leg takes all the cash
    expect(report.firstLeg).toMatchObject({ side: 'put', state: 'settled', outcome: 'otm', settlementCost: '0.000000' })
    const usdcUnits = (decimal: string) => toBaseUnits(decimal, 6)
    const premium = usdcUnits(report.firstLeg.premium)
    const fees = usdcUnits(report.firstLeg.fees)
    expect(premium).toBeGreaterThan(0n)
    expect(report.wheel).toMatchObject({ state: 'running', cycles: 2 })
    expect(report.secondLeg).toMatchObject({ side: 'put', state: 'placing' })
    // all the cash: leg 1's collateral and its premium net of fees, plus any interest the accruals
    // tick happened to record before the runner ran (it runs every 15 min of wall time)
    const allCash = wheelUsdc + premium - fees
    const collateral = usdcUnits(report.secondLeg.collateral)
    expect(collateral).toBeGreaterThanOrEqual(allCash)
    expect(collateral).toBeLessThanOrEqual(allCash + usdcUnits(report.usdc.income.interest))

    // each leg says why it was chosen: its expiry and strike among the candidates (the decision log)
    const whys = lines.filter((l) => l.includes('why: '))
    expect(whys.filter((l) => /why: Expiry .* chosen/.test(l))).toHaveLength(2)
    expect(whys.filter((l) => /why: Put strike .* chosen/.test(l))).toHaveLength(2)
    expect(whys.some((l) => l.includes('why: Opened a put with'))).toBe(true)
    // the first put by the profile's 0.2 target, the next by the 0.25 the user set while the first was live
    const strikes = whys.filter((l) => /why: Put strike .* chosen/.test(l))
    expect(strikes[0]).toContain('the nearest to the 0.2 target')
    expect(strikes[1]).toContain(`the nearest to the ${NEXT_PUT_DELTA_BPS / 10_000} target`)
    // the quote came before the wheel, with its fees as a share of the premium
    expect(lines.find((l) => /\] quote\s/.test(l))).toMatch(
      /premium [0-9.]+ USDC, fees [0-9.]+ USDC \([0-9.]+ % of it\)/,
    )

    // the withdrawal left the hot wallet for the user's own address
    expect(report.withdrawal).toMatchObject({ state: 'sent', destination: report.user })
    // the 202s added their jobs, which ran: the wheel's first leg and the withdrawal, each under its row's id
    const queueOf = (name: string) => queues.find((q) => q.name === name) as Queue
    const legJob = await queueOf(QUEUES.trading).getJob(report.firstLeg.id)
    expect(legJob?.name).toBe('position.advance')
    await expect.poll(() => legJob?.getState(), { timeout: 30_000 }).toBe('completed')
    const sendJob = await queueOf(QUEUES.withdrawals).getJob(report.withdrawal.id)
    expect(sendJob?.name).toBe('withdrawal.send')
    await expect.poll(() => sendJob?.getState(), { timeout: 30_000 }).toBe('completed')
    expect(report.receivedOnChainUsdc).toBe(withdrawUsdc)
    expect(report.usdc.freeBalance).toBe('450.000000')
    const [user] = await ctx.database.sql<{ id: string }[]>`
      select id from users where wallet_address = ${report.user}`
    expect(await balanceOf(ctx.database.sql, userTransit(user?.id ?? ''), 'USDC')).toBe(
      depositUsdc - wheelUsdc - withdrawUsdc,
    )

    // the statement tells the story in order: deposit, funding, sale, settlement, withdrawal
    const types = report.statement.map((r) => r.type)
    for (const t of ['deposit_detected', 'subaccount_funded', 'option_sold', 'option_settled', 'withdrawal_sent'])
      expect(types).toContain(t)
    expect(types.indexOf('deposit_detected')).toBeLessThan(types.indexOf('option_sold'))
    expect(types.indexOf('option_sold')).toBeLessThan(types.indexOf('option_settled'))

    // the money went the L2 route: base's hot wallet kept its target (100), the rest burned on base and minted on
    // L1 over CCTP less Circle's fast fee, journaled as `bridged` base → ethereum under the burn's key
    const journal = await ctx.database.sql<{ idempotency_key: string; payload: Record<string, string> }[]>`
      select idempotency_key, payload from ledger_events where type = 'bridged' order by id`
    const l2 = journal.filter((e) => e.payload.fromChain === 'base')
    expect(l2.map((e) => [e.payload.toChain, e.payload.amount])).toEqual([
      ['ethereum', (depositUsdc - toBaseUnits('100', 6)).toString()],
    ])
    expect(l2[0]?.idempotency_key).toBe(`tx:base:${String(l2[0]?.payload.txHash).toLowerCase()}:0`)
    const cctpFee = BigInt(l2[0]?.payload.feeAmount ?? -1)
    expect(cctpFee).toBe(((depositUsdc - toBaseUnits('100', 6)) * 130n + 999_999n) / 1_000_000n)
    // then the L1 deposit: the bridge is v3's, into the funding subaccount (after the opening deposit), less what
    // L1 keeps (its own 100 and the optimism and arbitrum hot wallets' refills to their targets)
    expect(bridgeAdapterFor(deps).name).toBe('derive-v3-l1')
    const toExchange = journal.filter((e) => e.payload.toChain === 'derive')
    expect(toExchange).toHaveLength(1)
    // (a refill that ran first left L1 by its gross amount: its own fast fee, under 0.1 USDC, less)
    const deposited = BigInt(toExchange[0]?.payload.amount ?? 0)
    expect(deposited).toBeLessThanOrEqual(depositUsdc - toBaseUnits('400', 6) - cctpFee)
    expect(deposited).toBeGreaterThan(depositUsdc - toBaseUnits('400', 6) - cctpFee - toBaseUnits('0.1', 6))
    const funding = deps.config.exchange.fundingSubaccountId
    const e12 = 10n ** 12n
    expect(
      sim.engine.history.deposits
        .filter((d) => d.subaccountId === funding && d.transactionId.startsWith('l1:'))
        .map((d) => d.amountE18),
    ).toEqual([toBaseUnits('1', 6) * e12, BigInt(toExchange[0]?.payload.amount ?? 0) * e12])
    // arbitrum's hot wallet was refilled from L1 before the withdrawal left it
    expect(journal.filter((e) => e.payload.fromChain === 'ethereum' && e.payload.toChain === 'arbitrum')).toHaveLength(
      1,
    )
    const funded = await ctx.database.sql<{ fee: string | null }[]>`
      select payload->>'feeAmount' as fee from ledger_events where type = 'subaccount_funded'`
    expect(funded.map((f) => f.fee)).toEqual([toBaseUnits(SIM_CREATION_FEE_USD, 6).toString()])
  })
})
