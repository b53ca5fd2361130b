/**
 * Money out on Derive v3, whole: the treasury tick (runTreasury) withdraws from the platform's funding
 * subaccount to the Ethereum hot wallet when a requested withdrawal would drain it; the simulator's
 * L1 payer pays it out through the WithdrawalOutbox stand-in on anvil from the deposits the manager
 * stand-in holds; the journal records `bridged` derive → ethereum once, with the fee the exchange
 * kept; the user's withdrawal is then sent from the refilled wallet. Crashes between signing,
 * sending and recording resume the same withdrawal. Under the outbox's per-recipient throttle the
 * settling transaction pays part and queues the rest: the treasury waits (pending, in flight, ops told
 * once, no second withdrawal), follows the id's later WithdrawalPaid logs as the simulator's payer
 * processes the queue, counts only final ones, and journals the one `bridged` once all is paid.
 * Real anvil, Postgres, Redis and simulator.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import {
  attachL1Payer,
  type L1Payer,
  type RunningSimulator,
  startDeriveSimulator,
  watchL1Deposits,
  whitelistRecipient,
} from '@wh/derive-simulator'
import { append, balanceOf, ownTxKey, PLATFORM_EXPENSE_OVERHEAD, platformHot, reserveWithdrawal } from '@wh/ledger'
import { inFlightLegs } from '@wh/solvency'
import {
  failFunding,
  findFundingDivergences,
  fundingSubaccountClaims,
  reserveFundingTransfer,
  storeSignedFunding,
} from '@wh/subaccounts'
import {
  integrationContext,
  type RpcProxy,
  type RunningChain,
  startChain,
  startRpcProxy,
  TEST_PRIVATE_KEYS,
  testEnv,
} from '@wh/testkit'
import {
  logsOver,
  QUEUED_REASON,
  runTreasury,
  shortfallOf,
  type TreasuryRunResult,
  withdrawalAmountOf,
} from '@wh/treasury'
import {
  type Alerter,
  type ChainClients,
  deployTestOnchainActionManager,
  deployTestUsdc,
  deployTestWithdrawalOutbox,
  testOnchainActionManagerAbi,
  testUsdcAbi,
  testWithdrawalOutboxAbi,
} from '@wh/wallet'
import { sendWithdrawals, withdrawalSendDeps } from '@wh/withdrawals'
import type { Job } from 'bullmq'
import { Redis } from 'ioredis'
import {
  type Address,
  createPublicClient,
  createTestClient,
  createWalletClient,
  getAddress,
  type Hex,
  http,
} from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { buildWorkerDeps } from '../src/deps'
import { reconcileSources } from '../src/jobs/exchange/ticks'
import { ticks } from '../src/jobs/index'
import { TREASURY_TICK_NAME, treasuryTick } from '../src/jobs/treasury/ticks'
import type { TickContext, WorkerDeps } from '../src/ticks'
import { creditDeposit, journalPlatformDeposits } from './fixtures/exchange-stack'
import { registerServiceKeys } from './fixtures/platform-funds'

const silent = { info() {}, warn() {} }
const USDC = (n: number) => BigInt(Math.round(n * 1_000_000))
const E12 = 10n ** 12n
const CHAIN = 'ethereum'
/** the L1 and the v3 signing domain share this id, as Ethereum (1) or Sepolia do */
const L1_CHAIN_ID = 11_155_111
const DEST: Address = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'
const crash = (where: string) => () => {
  throw new Error(`killed ${where}`)
}

describe('shortfallOf: the bridge surplus rule in reverse', () => {
  const rule = { floor: USDC(500), retain: USDC(1_000) }
  it('refills to the retained amount only under the floor, counting requested withdrawals as gone', () => {
    expect(shortfallOf({ ...rule, balance: USDC(1_200), requested: 0n })).toBe(0n)
    expect(shortfallOf({ ...rule, balance: USDC(1_200), requested: USDC(700) })).toBe(0n) // 500 free: at the floor
    expect(shortfallOf({ ...rule, balance: USDC(1_200), requested: USDC(700) + 1n })).toBe(USDC(500) + 1n)
    expect(shortfallOf({ ...rule, balance: USDC(100), requested: USDC(400) })).toBe(USDC(1_300))
  })
  it('a floor above the retained amount acts as it: never refills what the bridge would send back', () => {
    const high = { floor: USDC(2_000), retain: USDC(1_000) }
    expect(shortfallOf({ ...high, balance: USDC(1_000), requested: 0n })).toBe(0n)
    expect(shortfallOf({ ...high, balance: USDC(999), requested: 0n })).toBe(USDC(1))
  })
})

describe('logsOver: a queued payout followed through providers that cap eth_getLogs', () => {
  const refusing = (max: bigint, seen: [bigint, bigint][]) => async (from: bigint, to: bigint) => {
    seen.push([from, to])
    if (to - from + 1n > max) throw Object.assign(new Error('query exceeds max block range'), { code: -32005 })
    return Array.from({ length: Number(to - from + 1n) }, (_, i) => from + BigInt(i))
  }
  it('reads every block once, in ranges of at most the step', async () => {
    const seen: [bigint, bigint][] = []
    expect(await logsOver(100n, 104n, refusing(10n, seen), 2n)).toEqual([100n, 101n, 102n, 103n, 104n])
    expect(seen).toEqual([
      [100n, 101n],
      [102n, 103n],
      [104n, 104n],
    ])
    expect(await logsOver(7n, 7n, refusing(1n, []))).toEqual([7n])
    expect(await logsOver(8n, 7n, refusing(1n, []))).toEqual([]) // nothing final yet
  })
  it('halves a range the provider refuses as too wide, and keeps the narrower size', async () => {
    const seen: [bigint, bigint][] = []
    const blocks = await logsOver(0n, 9n, refusing(3n, seen), 16n)
    expect(blocks).toEqual([0n, 1n, 2n, 3n, 4n, 5n, 6n, 7n, 8n, 9n])
    expect(seen).toEqual([
      [0n, 9n], // refused
      [0n, 4n], // refused
      [0n, 1n],
      [2n, 3n],
      [4n, 5n],
      [6n, 7n],
      [8n, 9n],
    ])
  })
  it('throws other errors at once, and a limit that refuses even one block', async () => {
    const down = async () => {
      throw new Error('connection refused')
    }
    await expect(logsOver(0n, 9n, down)).rejects.toThrow('connection refused')
    await expect(logsOver(0n, 9n, refusing(0n, []))).rejects.toThrow('max block range')
  })
})

describe('withdrawalAmountOf: worth its fee', () => {
  const p = { shortfall: USDC(900), max: USDC(50_000), feeCap: USDC(1) }
  it('the shortfall, capped per run and by what the funding subaccount holds free', () => {
    expect(withdrawalAmountOf({ ...p, free: USDC(10_000) })).toBe(USDC(900))
    expect(withdrawalAmountOf({ ...p, max: USDC(300), free: USDC(10_000) })).toBe(USDC(300))
    expect(withdrawalAmountOf({ ...p, free: USDC(400) })).toBe(USDC(400))
  })
  it('nothing when the fee would swallow it or leave less than the minimum (the local run: 1 USDC free, 1 USD fee)', () => {
    expect(withdrawalAmountOf({ ...p, free: USDC(1) })).toBe(0n)
    expect(withdrawalAmountOf({ ...p, free: USDC(2) - 1n })).toBe(0n)
    expect(withdrawalAmountOf({ ...p, free: USDC(2) })).toBe(USDC(2))
    expect(withdrawalAmountOf({ ...p, free: 0n })).toBe(0n)
    expect(withdrawalAmountOf({ ...p, free: -USDC(5) })).toBe(0n) // more claimed than held
  })
})

describe('v3 money out: the treasury tick refills the Ethereum hot wallet from the funding subaccount, paid on L1', () => {
  let chain: RunningChain
  /** the worker's Ethereum RPC: the node behind a proxy that can play a provider capping eth_getLogs */
  let proxy: RpcProxy
  let sim: RunningSimulator
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  let redis: Redis
  let deps: WorkerDeps
  let clients: ChainClients
  let usdc: Address
  let funding: number
  let payer: L1Payer
  let mine: () => Promise<void>
  let later: (seconds: number) => Promise<void>
  let outbox: Address
  let usdcAsset: Address
  const alerts: { text: string; fields: unknown }[] = []
  const deployer = privateKeyToAccount(TEST_PRIVATE_KEYS[0])

  const hot = () => getAddress(deps.hotWallet(CHAIN).address)
  const usdcOf = (a: Address) =>
    clients.publicClient.readContract({ address: usdc, abi: testUsdcAbi, functionName: 'balanceOf', args: [a] })
  const fundingUsdc = () => sim.engine.subaccounts.get(funding)?.balances.get('USDC') ?? 0n
  const rows = () =>
    ctx.database.sql<
      {
        id: string
        state: string
        amount: string
        op_uuid: string | null
        fee: string | null
        outbox_ids: string[] | null
      }[]
    >`select id, state, amount, op_uuid, fee, outbox_ids from treasury_withdrawals order by created_at`
  const bridgedOut = () =>
    ctx.database.sql<{ idempotency_key: string; payload: Record<string, string> }[]>`
      select idempotency_key, payload from ledger_events
      where type = 'bridged' and payload->>'fromChain' = 'derive' order by idempotency_key`
  async function write(address: Address, abi: unknown, fn: string, args: unknown[]) {
    const hash = await clients.walletClient.writeContract({
      account: deployer,
      address,
      abi,
      functionName: fn,
      args,
    } as never)
    expect((await clients.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })).status).toBe('success')
  }
  /** a user's USDC withdrawal requested on Ethereum (it leaves from the hot wallet there) */
  async function requested(amount: bigint): Promise<string> {
    const userId = randomUUID()
    await append(ctx.database.sql, {
      type: 'deposit_detected',
      payload: {
        userId,
        chain: CHAIN,
        txHash: `0x${randomBytes(32).toString('hex')}`,
        logIndex: 0,
        currency: 'USDC',
        amount,
      },
      occurredAt: new Date(),
    })
    return ctx.database.sql.begin(async (tx) => {
      const r = await reserveWithdrawal(tx, { userId, currency: 'USDC', amount })
      await tx`update withdrawals set chain = ${CHAIN}, destination = ${DEST} where id = ${r.withdrawalId}`
      return r.withdrawalId
    })
  }

  beforeAll(async () => {
    chain = await startChain({ chainId: L1_CHAIN_ID })
    proxy = await startRpcProxy({ upstream: chain.rpcUrl })
    sim = await startDeriveSimulator({ chainId: L1_CHAIN_ID })
    const transport = http(chain.rpcUrl)
    const walletClient = createWalletClient({ account: deployer, transport })
    const publicClient = createPublicClient({ transport })
    const anvil = createTestClient({ mode: 'anvil', transport })
    mine = () => anvil.mine({ blocks: 1 })
    later = async (seconds) => {
      await anvil.increaseTime({ seconds })
      await mine()
    }
    usdc = getAddress(await deployTestUsdc(walletClient, publicClient))
    const res = await fetch(`${sim.v3HttpUrl}/public/get_currency`, { method: 'POST', body: '{"currency":"USDC"}' })
    usdcAsset = getAddress(
      ((await res.json()) as { result: { spot: { address: Address }[] } }).result.spot[0]?.address ?? '0x',
    )
    const manager = await deployTestOnchainActionManager(walletClient, publicClient, [
      { asset: usdcAsset, token: usdc },
    ])
    // the simulator's operator key: the outbox's one payer (Derive's verifiable app)
    const operatorKey = generatePrivateKey()
    await anvil.setBalance({ address: privateKeyToAccount(operatorKey).address, value: 10n ** 20n })
    outbox = await deployTestWithdrawalOutbox(walletClient, publicClient, {
      verifiableApp: privateKeyToAccount(operatorKey).address,
      manager,
      assets: [{ asset: usdcAsset, token: usdc, decimals: 6 }],
    })

    // the platform's account (its session key signs) and its funding subaccount, opened by a 10,000 USDC L1 deposit
    const env = testEnv()
    const owner = getAddress(env.EXCHANGE_WALLET_ADDRESS as string)
    registerServiceKeys(sim, env)
    const watcher = watchL1Deposits(sim.engine, { rpcUrl: chain.rpcUrl, manager, confirmations: 0, pollMs: 0 })
    clients = { walletClient, publicClient } as unknown as ChainClients
    await write(usdc, testUsdcAbi, 'mint', [deployer.address, USDC(10_000)])
    await write(usdc, testUsdcAbi, 'approve', [manager, USDC(10_000)])
    await write(manager, testOnchainActionManagerAbi, 'depositToNewSubaccount', [usdcAsset, USDC(10_000), 1, owner])
    expect(await watcher.poll()).toBe(1)
    await watcher.stop()
    funding = [...sim.engine.subaccounts.values()].find((s) => s.wallet === owner && s.label !== 'fallback')?.id ?? 0
    // the payout key (withdraw on the funding subaccount only) pays the treasury's withdrawals
    registerServiceKeys(sim, env, funding)
    payer = attachL1Payer(sim.engine, {
      rpcUrl: chain.rpcUrl,
      outbox,
      operatorKey,
      confirmations: 1,
      pollMs: 0,
      feeUsd: '0.5',
    })

    ctx = await integrationContext({
      RPC_URL_ETHEREUM: proxy.url,
      EXCHANGE_CHAIN_ID: String(L1_CHAIN_ID),
      EXCHANGE_HTTP_URL: sim.v3HttpUrl,
      EXCHANGE_WS_URL: sim.v3WsUrl,
      EXCHANGE_FUNDING_SUBACCOUNT_ID: String(funding),
      EXCHANGE_DEPOSIT_MANAGER_ADDRESS: manager,
      EXCHANGE_WITHDRAWAL_OUTBOX_ADDRESS: outbox,
      BRIDGE_RETAIN_USDC: '1000',
      TREASURY_FLOOR_USDC: '500',
      TREASURY_MAX_WITHDRAW_USDC: '5000',
    })
    redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 })
    const built = buildWorkerDeps(
      ctx.config,
      { sql: ctx.database.sql, redis, log: silent },
      {
        chains: { [CHAIN]: { chainId: L1_CHAIN_ID, usdc, confirmations: 1 } },
        // the worker on the exchange's clock, as in the local run; the database keeps the wall clock
        clock: { now: () => new Date(sim.control.nowMs()) },
      },
    )
    const alerter: Alerter = {
      channel: 'log',
      alert: async (text, fields) => {
        alerts.push({ text, fields })
      },
    }
    deps = { ...built, alerter }
    clients = deps.clients.get(CHAIN) as ChainClients
    await anvil.setBalance({ address: hot(), value: 10n ** 19n }) // gas for the user's withdrawal
    // the hot wallet is on the owner's list of recipients (Derive: private/update_whitelisted_recipients)
    whitelistRecipient(sim.engine, owner, hot())
    // the opening deposit journaled, as the bridge journals its own: the funding subaccount reconciles exactly
    await journalPlatformDeposits(ctx.database.sql, { USDC: '10000' }, new Date(sim.control.nowMs()))
  }, 90_000)
  afterAll(async () => {
    await payer?.stop()
    redis?.disconnect()
    await ctx?.database.close()
    await sim?.close()
    await proxy?.stop()
    await chain?.stop()
  })

  it('is registered on the treasury queue', () => {
    expect(ticks).toContain(treasuryTick)
    expect([treasuryTick.name, treasuryTick.queue]).toEqual([TREASURY_TICK_NAME, 'treasury'])
  })

  it('does nothing while the hot wallet covers its requested withdrawals above the floor', async () => {
    await write(usdc, testUsdcAbi, 'mint', [hot(), USDC(1_200)])
    expect(await runTreasury(deps)).toEqual({ status: 'idle', shortfallBaseUnits: 0n })
    // the registered tick, under the exchange cycle lock: the same, as JSON
    const tickCtx = { log: silent, deps, queues: new Map() } as unknown as TickContext
    expect(await treasuryTick.process({} as Job, tickCtx)).toEqual({ status: 'idle', shortfallBaseUnits: '0' })
    expect(await rows()).toEqual([])
    expect(fundingUsdc()).toBe(USDC(10_000) * E12)
  })

  it('a withdrawal the hot wallet cannot cover: withdrawn once across crashes, paid on L1, bridged derive → ethereum once, then sent', async () => {
    const fundingDivergences = async () =>
      findFundingDivergences(deps, reconcileSources, funding, { epsilon: '0.01', nowMs: sim.control.nowMs() }, silent)
    expect(await fundingDivergences()).toEqual([])
    const withdrawalId = await requested(USDC(1_000))
    // 1,200 − 1,000 requested is under the 500 floor: 800 back up to the 1,000 retained
    await expect(runTreasury(deps, { afterStore: crash('after storing') })).rejects.toThrow('killed after storing')
    expect((await rows()).map((r) => [r.state, r.amount])).toEqual([['signed', USDC(800).toString()]])
    expect(fundingUsdc()).toBe(USDC(10_000) * E12) // nothing sent

    await expect(runTreasury(deps, { afterSend: crash('after sending') })).rejects.toThrow('killed after sending')
    expect((await rows())[0]?.state).toBe('signed') // the acceptance was never recorded
    expect(fundingUsdc()).toBe(USDC(9_200) * E12)
    // left the funding subaccount, not journaled yet: its reconciliation counts it in flight, not as a loss
    expect(await fundingDivergences()).toEqual([])
    // left the funding subaccount, not on L1 yet: solvency counts it in flight, never nowhere
    const treasuryLegs = async () =>
      (await inFlightLegs(ctx.database.sql, CHAIN, await clients.publicClient.getBlockNumber())).filter(
        (l) => l.kind === 'treasury_in_flight',
      )
    expect(await treasuryLegs()).toEqual([
      { side: 'asset', currency: 'USDC', kind: 'treasury_in_flight', place: `${CHAIN}:treasury`, amount: USDC(800) },
    ])

    // the replay is refused for its nonce and the withdrawal is not settled yet: wait, never a second signature
    expect(await runTreasury(deps)).toMatchObject({ status: 'pending' })
    expect(fundingUsdc()).toBe(USDC(9_200) * E12)
    expect(payer.pending()).toBe(1)
    expect(await rows()).toHaveLength(1)

    // the batch: paid on L1 in one call, settled once 1 block deep
    const before = await usdcOf(hot())
    expect(await payer.poll()).toBe(0)
    expect(await usdcOf(hot())).toBe(before + USDC(799.5))
    await mine()
    expect(await payer.poll()).toBe(1)

    // the database's clock ahead of the exchange's (a loaded machine, a frozen simulator): the landed withdrawal
    // is still found in the history, searched from when it was signed by the earlier of the two clocks
    await ctx.database.sql`update treasury_withdrawals set created_at = created_at + interval '10 minutes'`
    await expect(runTreasury(deps, { beforeRecord: crash('before the journal') })).rejects.toThrow('before the journal')
    await ctx.database.sql`update treasury_withdrawals set created_at = created_at - interval '10 minutes'`
    expect(await bridgedOut()).toEqual([])
    const hotBefore = await balanceOf(ctx.database.sql, platformHot(CHAIN), 'USDC')
    const overheadBefore = await balanceOf(ctx.database.sql, PLATFORM_EXPENSE_OVERHEAD, 'USDC')
    const r = await runTreasury(deps)
    expect(r).toMatchObject({ status: 'refilled', amountBaseUnits: USDC(800), feeBaseUnits: USDC(0.5) })
    if (r.status !== 'refilled') return
    const events = await bridgedOut()
    expect(events.map((e) => e.idempotency_key)).toEqual([ownTxKey({ chain: 'derive', txHash: r.l1TxHash, slot: 0 })])
    expect(events[0]?.payload).toMatchObject({
      toChain: CHAIN,
      currency: 'USDC',
      amount: '800000000',
      feeAmount: '500000',
    })
    expect(await balanceOf(ctx.database.sql, platformHot(CHAIN), 'USDC')).toBe(hotBefore + USDC(799.5))
    expect(await balanceOf(ctx.database.sql, PLATFORM_EXPENSE_OVERHEAD, 'USDC')).toBe(overheadBefore + USDC(0.5))
    expect((await rows()).map((x) => [x.state, x.op_uuid !== null, x.fee])).toEqual([['paid', true, '500000']])
    expect(await treasuryLegs()).toEqual([])

    // again: covered now (1,999.5 − 1,000 requested ≥ 500): nothing signed, nothing journaled twice
    expect(await runTreasury(deps)).toMatchObject({ status: 'idle' })
    expect(await rows()).toHaveLength(1)
    expect(await bridgedOut()).toHaveLength(1)
    expect(fundingUsdc()).toBe(USDC(9_200) * E12)

    // the user's withdrawal leaves the refilled wallet
    const send = withdrawalSendDeps(deps, silent)
    await sendWithdrawals(send)
    await mine()
    await sendWithdrawals(send)
    const [w] = await ctx.database.sql<{ state: string }[]>`select state from withdrawals where id = ${withdrawalId}`
    expect(w?.state).toBe('sent')
    expect(await usdcOf(DEST)).toBe(USDC(1_000))
  }, 60_000)

  it('a withdrawal the exchange refuses fails cleanly: an alert, nothing journaled, nothing moved', async () => {
    await requested(USDC(900)) // 999.5 − 900 is under the floor
    sim.control.failNext({ method: 'private/withdraw', code: 11033 })
    const r = await runTreasury(deps)
    expect(r).toMatchObject({ status: 'failed' })
    expect((await rows()).map((x) => x.state)).toEqual(['paid', 'failed'])
    expect(alerts.map((a) => a.text)).toEqual([
      'treasury withdrawal failed; nothing moved, the funds stay at the exchange',
    ])
    expect(await bridgedOut()).toHaveLength(1)
    expect(fundingUsdc()).toBe(USDC(9_200) * E12)
    expect(payer.pending()).toBe(0)
  }, 30_000)

  it("a refill under the outbox's throttle: part paid, the rest queued; pending and followed (no second withdrawal), journaled once when all is paid and final", async () => {
    // Derive throttles the hot wallet: a 300 USDC bucket, refilled 10 USDC a second
    await write(outbox, testWithdrawalOutboxAbi, 'setBucketLimit', [hot(), usdcAsset, USDC(300), USDC(10)])
    const queueLength = () =>
      clients.publicClient.readContract({
        address: outbox,
        abi: testWithdrawalOutboxAbi,
        functionName: 'queueLength',
        args: [hot(), usdcAsset],
      })
    const progress = (r: TreasuryRunResult) => {
      const m = r.status === 'pending' ? /: (\d+) paid, (\d+) queued$/.exec(r.reason) : null
      return m ? { paid: BigInt(m[1] as string), queued: BigInt(m[2] as string) } : undefined
    }
    const alertsBefore = alerts.length
    const bridgedBefore = (await bridgedOut()).length
    const hotBook = () => balanceOf(ctx.database.sql, platformHot(CHAIN), 'USDC')
    const hotBookBefore = await hotBook()
    const chainBefore = await usdcOf(hot())
    // 999.5 on chain − 900 requested (the refused refill's) is under the floor: 900.5 back up to 1,000
    expect(await runTreasury(deps)).toMatchObject({ status: 'pending', reason: 'its batch has not settled' })
    const open = (await rows()).at(-1)
    expect([open?.state, open?.amount, open?.outbox_ids]).toEqual(['sent', USDC(900.5).toString(), null])
    const fundingAfterSend = fundingUsdc()

    // the batch: the settling call pays the bucket (300) and queues the rest (600 of the 900 net)
    expect(await payer.poll()).toBe(0)
    expect(await usdcOf(hot())).toBe(chainBefore + USDC(300))
    expect(await queueLength()).toBe(1n)
    await mine()
    expect(await payer.poll()).toBe(1) // settled at the exchange; its keeper may pay a second's refill
    await mine() // that payment, if any, final too

    // from here on the worker's provider refuses eth_getLogs over more than 2 blocks, as hosted ones cap
    // ranges: the payout is followed in ranges that fit, every block read once
    await proxy.script([{ method: 'eth_getLogs', action: { maxLogRange: { blocks: 2 } } }])

    // pending, queued: nothing journaled, the row open with its outbox id, counted in flight; told once
    const first = await runTreasury(deps)
    // three events followed, each over more than 2 blocks: refused once, then read in ranges that fit
    expect((await proxy.stats()).eth_getLogs?.seen).toBeGreaterThan(6)
    expect(first).toMatchObject({ status: 'pending' })
    if (first.status !== 'pending') return
    expect(first.reason.startsWith(QUEUED_REASON)).toBe(true)
    const seen = progress(first)
    expect(seen?.paid).toBe((await usdcOf(hot())) - chainBefore) // every final payment so far, no more
    expect((seen?.paid ?? 0n) + (seen?.queued ?? 0n)).toBe(USDC(900))
    expect(await bridgedOut()).toHaveLength(bridgedBefore)
    const queuedRow = (await rows()).at(-1)
    expect(queuedRow?.state).toBe('sent')
    expect(queuedRow?.outbox_ids).toHaveLength(1)
    const legs = (await inFlightLegs(ctx.database.sql, CHAIN, await clients.publicClient.getBlockNumber())).filter(
      (l) => l.kind === 'treasury_in_flight',
    )
    expect(legs.map((l) => l.amount)).toEqual([USDC(900.5)])
    expect(
      await findFundingDivergences(
        deps,
        reconcileSources,
        funding,
        { epsilon: '0.01', nowMs: sim.control.nowMs() },
        silent,
      ),
    ).toEqual([])
    // again while queued: the same row waits, no second withdrawal, no second alert
    expect(await runTreasury(deps)).toMatchObject({ status: 'pending', withdrawalId: queuedRow?.id })
    expect(await rows()).toHaveLength(3)
    expect(fundingUsdc()).toBe(fundingAfterSend)
    expect(alerts.slice(alertsBefore).map((a) => a.text)).toEqual([
      'treasury withdrawal queued by the outbox throttle on L1; followed until paid',
    ])

    // the bucket refills (a minute: full again); the simulator's payer processes the queue: 300 more,
    // mined at the head, not final: not counted yet
    await later(60)
    await payer.poll()
    expect(await usdcOf(hot())).toBe(chainBefore + (seen?.paid ?? 0n) + USDC(300))
    expect(progress(await runTreasury(deps))).toEqual(seen)
    await mine()
    expect(progress(await runTreasury(deps))).toEqual({
      paid: (seen?.paid ?? 0n) + USDC(300),
      queued: (seen?.queued ?? 0n) - USDC(300),
    })

    // the rest, paid at the head: still pending until it is final
    for (let i = 0; i < 3 && (await queueLength()) > 0n; i++) {
      await later(60)
      await payer.poll()
    }
    expect(await queueLength()).toBe(0n)
    expect(await usdcOf(hot())).toBe(chainBefore + USDC(900))
    expect(await runTreasury(deps)).toMatchObject({ status: 'pending', reason: expect.stringMatching(/queued$/) })
    expect(await bridgedOut()).toHaveLength(bridgedBefore)
    await mine()

    // killed between the final payout and the journal: nothing recorded; the next run records it once
    await expect(runTreasury(deps, { beforeRecord: crash('before the journal') })).rejects.toThrow('before the journal')
    expect(await bridgedOut()).toHaveLength(bridgedBefore)
    expect((await rows()).at(-1)?.state).toBe('sent')
    const r = await runTreasury(deps)
    expect(r).toMatchObject({ status: 'refilled', amountBaseUnits: USDC(900.5), feeBaseUnits: USDC(0.5) })
    if (r.status !== 'refilled') return
    const events = await bridgedOut()
    expect(events).toHaveLength(bridgedBefore + 1)
    const key = ownTxKey({ chain: 'derive', txHash: r.l1TxHash, slot: 0 })
    expect(events.find((e) => e.idempotency_key === key)?.payload).toMatchObject({
      toChain: CHAIN,
      amount: USDC(900.5).toString(),
      feeAmount: USDC(0.5).toString(),
    })
    // the settling transaction names the batch (the key), and the book rose by what arrived on chain
    expect(sim.engine.transactions.get(r.opUuid)?.data).toMatchObject({ l1TxHash: r.l1TxHash })
    expect(await usdcOf(hot())).toBe(chainBefore + USDC(900))
    expect(await hotBook()).toBe(hotBookBefore + USDC(900))
    expect((await rows()).at(-1)).toMatchObject({ state: 'paid', fee: USDC(0.5).toString() })
    expect((await rows()).at(-1)?.outbox_ids).toEqual(queuedRow?.outbox_ids)

    // again: covered now; nothing signed, nothing journaled twice, no alert more
    expect(await runTreasury(deps)).toMatchObject({ status: 'idle' })
    expect(await rows()).toHaveLength(3)
    expect(await bridgedOut()).toHaveLength(bridgedBefore + 1)
    expect(alerts.length).toBe(alertsBefore + 1)
  }, 60_000)

  it('what fundings in flight claim of the funding subaccount is not the treasury’s to withdraw: reserved, signed (a creation’s fee cap on top) or accepted, until it ends', async () => {
    const sql = ctx.database.sql
    const claims = () => fundingSubaccountClaims(sql, 'USDC', 6)
    const before = await claims()
    const userId = randomUUID()
    await creditDeposit(sql, userId, USDC(100), { at: new Date(sim.control.nowMs()) })
    const { transferId } = await reserveFundingTransfer(sql, {
      userId,
      asset: 'USDC',
      currency: 'USDC',
      amount: USDC(40),
    })
    expect(await claims()).toBe(before + USDC(40))
    // signed as a creation: the amount and the fee cap sent on top leave the funding subaccount
    const signed = {
      method: 'create_subaccount' as const,
      params: { amount: '41', nonce: '1', signer: hot(), signature: '0x' as Hex, signature_expiry_sec: 1 },
    }
    expect(await storeSignedFunding(sql, transferId, signed, new Date())).toBeDefined()
    expect(await claims()).toBe(before + USDC(41))
    await failFunding(sql, transferId, 'test over', new Date())
    expect(await claims()).toBe(before)
  })
})
