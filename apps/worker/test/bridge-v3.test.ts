/**
 * Money in on Derive v3, whole: the bridge tick (runBridge) with the v3 adapter deposits the hot
 * wallet's USDC on L1 through the OnchainActionManager stand-in into the platform's funding
 * subaccount, the journal records `bridged` and the gas once, and the Derive simulator's L1 watcher
 * credits the subaccount once the deposit is final. Only the surplus above BRIDGE_RETAIN_USDC and the chain's
 * requested withdrawals moves; a worker killed after signing resumes the very same transaction; a chain the
 * exchange does not sign for is refused, nothing signed. Real anvil, Postgres, Redis and simulator.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { type RunningSimulator, startDeriveSimulator, watchL1Deposits } from '@wh/derive-simulator'
import { append, balanceOf, ownTxKey, PLATFORM_EXPENSE_OVERHEAD, platformHot, reserveWithdrawal } from '@wh/ledger'
import { integrationContext, type RunningChain, startChain, TEST_PRIVATE_KEYS, testEnv } from '@wh/testkit'
import { bridgeAdapterFor, runBridge } from '@wh/treasury'
import {
  type BridgeAdapter,
  BridgeUnavailableError,
  CHAIN_NAMES,
  type ChainClients,
  DeriveV3DepositAdapter,
  DuplicateChainIdError,
  deployTestOnchainActionManager,
  deployTestUsdc,
  EXCHANGE_CHAIN_NAME,
  testOnchainActionManagerAbi,
  testUsdcAbi,
} from '@wh/wallet'
import type { Job } from 'bullmq'
import { Redis } from 'ioredis'
import { type Address, createPublicClient, createWalletClient, getAddress, type Hex, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { buildWorkerDeps } from '../src/deps'
import { ticks } from '../src/jobs/index'
import { bridgeTicks } from '../src/jobs/treasury/ticks'
import type { WorkerDeps } from '../src/ticks'

const silent = { info() {}, warn() {} }
const USDC = (n: number) => BigInt(n) * 1_000_000n
const E12 = 10n ** 12n
const CHAIN = 'ethereum'
/** the L1 and the v3 signing domain share this id, as Ethereum (1) or Sepolia do */
const L1_CHAIN_ID = 11_155_111

describe('v3 money in: the bridge tick deposits on L1 into the funding subaccount, credited once final', () => {
  let chain: RunningChain
  let sim: RunningSimulator
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  let redis: Redis
  let deps: WorkerDeps
  let clients: ChainClients
  let usdc: Address
  let manager: Address
  let usdcAsset: Address
  let fundingSubaccount: number
  let adapter: BridgeAdapter
  let watcher: ReturnType<typeof watchL1Deposits>
  const deployer = privateKeyToAccount(TEST_PRIVATE_KEYS[0])

  async function write(address: Address, abi: unknown, fn: string, args: unknown[]) {
    const hash = await clients.walletClient.writeContract({
      account: deployer,
      address,
      abi,
      functionName: fn,
      args,
    } as never)
    const r = await clients.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })
    expect(r.status).toBe('success')
  }
  const hot = () => deps.hotWallet(CHAIN).address as Address
  const owner = () => getAddress(ctx.config.exchange.walletAddress)
  const usdcOf = (a: Address) =>
    clients.publicClient.readContract({ address: usdc, abi: testUsdcAbi, functionName: 'balanceOf', args: [a] })
  const creditedUsdc = () => sim.engine.subaccounts.get(fundingSubaccount)?.balances.get('USDC') ?? 0n
  const rowsOf = (refId: string) =>
    ctx.database.sql<{ step: number; to_address: string; state: string; tx_hash: Hex }[]>`
      select step, to_address, state, tx_hash from outbound_txs
      where purpose = 'bridge' and ref_id = ${refId} order by step`
  const eventsAbout = (txHash: Hex) =>
    ctx.database.sql<{ type: string; idempotency_key: string; payload: Record<string, string> }[]>`
      select type, idempotency_key, payload from ledger_events
      where idempotency_key like ${`tx:${CHAIN}:${txHash.toLowerCase()}:%`} order by idempotency_key`
  const bridgeRows = () =>
    ctx.database.sql<{ ref_id: string; step: number; state: string; tx_hash: Hex }[]>`
      select ref_id, step, state, tx_hash from outbound_txs where purpose = 'bridge' order by created_at, id`
  const gasOf = async (hash: Hex) => {
    const r = await clients.publicClient.getTransactionReceipt({ hash })
    return r.gasUsed * r.effectiveGasPrice
  }
  const overheadEth = () => balanceOf(ctx.database.sql, PLATFORM_EXPENSE_OVERHEAD, 'ETH')
  /** mines a block and lets the watcher credit what is final */
  async function settleOnExchange() {
    await clients.publicClient.request({ method: 'anvil_mine' as never, params: ['0x1'] as never })
    await watcher.poll()
  }
  /** The tick as the worker runs it (its lock, the deployment's adapter), on `on` (the test's deps by default). */
  const tick = (name: string, on: WorkerDeps = deps) => {
    const t = bridgeTicks.find((x) => x.name === name)
    if (!t) throw new Error(`no tick ${name}`)
    return t.process({} as Job, { log: silent, deps: on, queues: new Map() }) as Promise<Record<string, unknown>>
  }

  beforeAll(async () => {
    chain = await startChain({ chainId: L1_CHAIN_ID })
    sim = await startDeriveSimulator({ chainId: L1_CHAIN_ID })
    const transport = http(chain.rpcUrl)
    const walletClient = createWalletClient({ account: deployer, transport })
    const publicClient = createPublicClient({ transport })
    usdc = getAddress(await deployTestUsdc(walletClient, publicClient))
    const res = await fetch(`${sim.v3HttpUrl}/public/get_currency`, { method: 'POST', body: '{"currency":"USDC"}' })
    usdcAsset = getAddress(
      ((await res.json()) as { result: { spot: { address: Address }[] } }).result.spot[0]?.address ?? '0x',
    )
    manager = await deployTestOnchainActionManager(walletClient, publicClient, [{ asset: usdcAsset, token: usdc }])

    // the platform's funding subaccount: opened by a first deposit for the owner (v3 has no create call)
    const owner = getAddress(testEnv().EXCHANGE_WALLET_ADDRESS as string)
    watcher = watchL1Deposits(sim.engine, { rpcUrl: chain.rpcUrl, manager, confirmations: 1, pollMs: 0 })
    const deployerWrite = async (address: Address, abi: unknown, fn: string, args: unknown[]) => {
      const hash = await walletClient.writeContract({ address, abi, functionName: fn, args, chain: null } as never)
      expect((await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })).status).toBe('success')
    }
    await deployerWrite(usdc, testUsdcAbi, 'mint', [deployer.address, USDC(1)])
    await deployerWrite(usdc, testUsdcAbi, 'approve', [manager, USDC(1)])
    await deployerWrite(manager, testOnchainActionManagerAbi, 'depositToNewSubaccount', [usdcAsset, USDC(1), 1, owner])
    await publicClient.request({ method: 'anvil_mine' as never, params: ['0x1'] as never })
    expect(await watcher.poll()).toBe(1)
    const opened = [...sim.engine.subaccounts.values()].filter((s) => s.wallet === owner && s.label !== 'fallback')
    fundingSubaccount = opened[0]?.id ?? 0
    expect(creditedUsdc()).toBe(USDC(1) * E12)

    // the worker's configuration on v3: the bridge adapter is the deployment's (bridgeAdapterFor)
    ctx = await integrationContext({
      RPC_URL_ETHEREUM: chain.rpcUrl,
      EXCHANGE_CHAIN_ID: String(L1_CHAIN_ID),
      EXCHANGE_HTTP_URL: sim.v3HttpUrl,
      EXCHANGE_WS_URL: sim.v3WsUrl,
      EXCHANGE_FUNDING_SUBACCOUNT_ID: String(fundingSubaccount),
      EXCHANGE_DEPOSIT_MANAGER_ADDRESS: manager,
      BRIDGE_RETAIN_USDC: '100',
    })
    redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 })
    deps = buildWorkerDeps(
      ctx.config,
      { sql: ctx.database.sql, redis, log: silent },
      { chains: { [CHAIN]: { chainId: L1_CHAIN_ID, usdc, confirmations: 0 } } },
    )
    clients = deps.clients.get(CHAIN) as ChainClients
    adapter = bridgeAdapterFor(deps)
  }, 60_000)
  afterAll(async () => {
    await watcher?.stop()
    redis?.disconnect()
    await ctx?.database.close()
    await sim?.close()
    await chain?.stop()
  })

  it('on v3 the deployment deposits on L1, and only from the L1 the exchange signs for: another chain is refused, never guessed', () => {
    expect(adapter.name).toBe('derive-v3-l1')
    expect(() => adapter.assertReady(CHAIN)).not.toThrow()
    const elsewhere = new DeriveV3DepositAdapter({
      outbox: { sql: deps.sql, clients: deps.clients, registry: deps.registry },
      manager,
      usdcAsset: async () => usdcAsset,
      fundingSubaccountId: 1n,
      owner: owner(),
      exchangeChainId: 1,
    })
    expect(() => elsewhere.assertReady(CHAIN)).toThrow(BridgeUnavailableError)
  })

  it('approve then deposit into the funding subaccount; bridged and the gas once, across a crash before the journal; the exchange credits it once final, once', async () => {
    const overheadBefore = await overheadEth()
    await write(usdc, testUsdcAbi, 'mint', [hot(), USDC(500)])
    await expect(
      runBridge(deps, adapter, CHAIN, {
        beforeRecord: () => {
          throw new Error('killed before the journal')
        },
      }),
    ).rejects.toThrow('killed before the journal')
    const r = await runBridge(deps, adapter, CHAIN)
    expect(r).toMatchObject({ status: 'bridged', amountBaseUnits: USDC(400), feeBaseUnits: 0n })
    if (r.status !== 'bridged') return
    const rows = await rowsOf(r.transferId)
    expect(rows.map((x) => [x.step, x.to_address, x.state])).toEqual([
      [0, usdc, 'confirmed'],
      [1, manager, 'confirmed'],
    ])
    expect(await usdcOf(manager)).toBe(USDC(401))
    expect(await usdcOf(hot())).toBe(USDC(100))
    const deposit = rows[1]?.tx_hash as Hex
    expect((await eventsAbout(deposit)).map((e) => [e.type, e.idempotency_key])).toEqual([
      ['bridged', ownTxKey({ chain: CHAIN, txHash: deposit, slot: 0 })],
      ['gas_spent', ownTxKey({ chain: CHAIN, txHash: deposit, slot: 1 })],
    ])
    expect(await balanceOf(ctx.database.sql, platformHot(EXCHANGE_CHAIN_NAME), 'USDC')).toBe(USDC(400))
    // the approve's gas is the platform's too, its transaction's only event (slot 0); each gas booked once
    // although the run crashed before the journal once
    const approve = rows[0]?.tx_hash as Hex
    expect((await eventsAbout(approve)).map((e) => [e.type, e.idempotency_key])).toEqual([
      ['gas_spent', ownTxKey({ chain: CHAIN, txHash: approve, slot: 0 })],
    ])
    expect((await overheadEth()) - overheadBefore).toBe((await gasOf(approve)) + (await gasOf(deposit)))

    // the exchange: not yet (the deposit's block is the head), then once, into the funding subaccount
    expect(await watcher.poll()).toBe(0)
    expect(creditedUsdc()).toBe(USDC(1) * E12)
    await clients.publicClient.request({ method: 'anvil_mine' as never, params: ['0x1'] as never })
    expect(await watcher.poll()).toBe(1)
    expect(creditedUsdc()).toBe(USDC(401) * E12)
    expect(sim.engine.history.deposits.at(-1)).toMatchObject({ subaccountId: fundingSubaccount, txHash: deposit })

    // the tick again: idle, nothing signed; the watcher again: nothing credited twice
    expect(await runBridge(deps, adapter, CHAIN)).toEqual({ status: 'idle', surplusBaseUnits: 0n })
    expect(await watcher.poll()).toBe(0)
    expect(creditedUsdc()).toBe(USDC(401) * E12)
  })

  it('is registered on the treasury queue, one tick per chain; one node cannot stand in for several chains', async () => {
    expect(bridgeTicks.map((t) => [t.name, t.queue])).toEqual([
      ['bridge-ethereum', 'treasury'],
      ['bridge-optimism', 'treasury'],
      ['bridge-base', 'treasury'],
      ['bridge-arbitrum', 'treasury'],
    ])
    for (const t of bridgeTicks) expect(ticks).toContain(t)
    // every chain under the L1's id (the old local run's one node): refused, so no two names share a hot wallet's nonces
    expect(() =>
      buildWorkerDeps(
        ctx.config,
        { sql: ctx.database.sql, redis, log: silent },
        { chains: Object.fromEntries(CHAIN_NAMES.map((c) => [c, { chainId: L1_CHAIN_ID, usdc, confirmations: 0 }])) },
      ),
    ).toThrow(DuplicateChainIdError)
  })

  it("moves only the surplus above the retained amount and the chain's requested withdrawals, through the tick; books the deposit and its gas", async () => {
    const overheadBefore = await overheadEth()
    const bridgedBefore = await balanceOf(ctx.database.sql, platformHot(EXCHANGE_CHAIN_NAME), 'USDC')
    const creditedBefore = creditedUsdc()
    await write(usdc, testUsdcAbi, 'mint', [hot(), USDC(500)]) // the hot wallet: 100 retained + 500
    // a requested USDC withdrawal on this chain stays covered in the hot wallet
    const userId = randomUUID()
    await append(ctx.database.sql, {
      type: 'deposit_detected',
      payload: {
        userId,
        chain: CHAIN,
        txHash: `0x${randomBytes(32).toString('hex')}`,
        logIndex: 0,
        currency: 'USDC',
        amount: USDC(80),
      },
      occurredAt: new Date(),
    })
    await ctx.database.sql.begin(async (tx) => {
      const w = await reserveWithdrawal(tx, { userId, currency: 'USDC', amount: USDC(50) })
      await tx`update withdrawals set chain = ${CHAIN} where id = ${w.withdrawalId}`
    })

    const r = await tick('bridge-ethereum')
    expect(r).toMatchObject({ chain: CHAIN, status: 'bridged', amountBaseUnits: '450000000', feeBaseUnits: '0' })
    const txHash = r.txHash as Hex
    // the allowance of the first transfer covers this one: the deposit alone, no second approve
    expect((await bridgeRows()).filter((x) => x.tx_hash === txHash).map((x) => [x.step, x.state])).toEqual([
      [1, 'confirmed'],
    ])
    expect(await usdcOf(hot())).toBe(USDC(150))
    const events = await eventsAbout(txHash)
    expect(events.map((e) => e.type)).toEqual(['bridged', 'gas_spent'])
    expect(events[0]?.payload).toMatchObject({
      fromChain: CHAIN,
      toChain: EXCHANGE_CHAIN_NAME,
      currency: 'USDC',
      amount: '450000000',
      feeAmount: '0',
    })
    const gas = await gasOf(txHash)
    expect(events[1]?.payload).toMatchObject({ currency: 'ETH', amount: gas.toString() })
    expect(events[1]?.payload.userId).toBeUndefined()
    expect((await overheadEth()) - overheadBefore).toBe(gas)
    expect((await balanceOf(ctx.database.sql, platformHot(EXCHANGE_CHAIN_NAME), 'USDC')) - bridgedBefore).toBe(
      USDC(450),
    )
    await settleOnExchange()
    expect(creditedUsdc() - creditedBefore).toBe(USDC(450) * E12)

    // nothing left above the retained amount and the withdrawal: idle, nothing signed
    const rowsBefore = (await bridgeRows()).length
    expect(await tick('bridge-ethereum')).toMatchObject({ status: 'idle', surplusBaseUnits: '0' })
    expect(await bridgeRows()).toHaveLength(rowsBefore)
  })

  it('a worker killed after signing resumes the very same deposit: one transaction, one credit, one set of events', async () => {
    const creditedBefore = creditedUsdc()
    await write(usdc, testUsdcAbi, 'mint', [hot(), USDC(40)])
    let signed: Hex | undefined
    const crashing = bridgeAdapterFor(deps, {
      afterSigned: (rec) => {
        signed = rec.txHash
        throw new Error('killed after signing')
      },
    })
    await expect(runBridge(deps, crashing, CHAIN)).rejects.toThrow('killed after signing')
    expect((await bridgeRows()).at(-1)).toMatchObject({ step: 1, state: 'signed', tx_hash: signed })
    await expect(clients.publicClient.getTransaction({ hash: signed as Hex })).rejects.toThrow()

    // more arrives meanwhile: the open transfer is finished first, with the amount it signed
    await write(usdc, testUsdcAbi, 'mint', [hot(), USDC(5)])
    expect(await runBridge(deps, adapter, CHAIN)).toMatchObject({
      status: 'bridged',
      txHash: signed,
      amountBaseUnits: USDC(40),
    })
    expect((await eventsAbout(signed as Hex)).map((e) => e.type)).toEqual(['bridged', 'gas_spent'])
    // then the next run bridges what arrived meanwhile
    const next = await runBridge(deps, adapter, CHAIN)
    expect(next).toMatchObject({ status: 'bridged', amountBaseUnits: USDC(5) })
    expect(next.status === 'bridged' && next.txHash).not.toBe(signed)
    expect(await usdcOf(hot())).toBe(USDC(150))
    await settleOnExchange()
    expect(creditedUsdc() - creditedBefore).toBe(USDC(45) * E12)
    expect(sim.engine.history.deposits.filter((d) => d.txHash === signed)).toHaveLength(1)
  })

  it('a deployment whose exchange signs for another L1 refuses every run with a clear error and signs nothing', async () => {
    await write(usdc, testUsdcAbi, 'mint', [hot(), USDC(10)])
    const before = await bridgeRows()
    const mainnet: WorkerDeps = {
      ...deps,
      config: { ...deps.config, exchange: { ...deps.config.exchange, chainId: 1 } },
    }
    const refusing = bridgeAdapterFor(mainnet)
    await expect(runBridge(mainnet, refusing, CHAIN)).rejects.toBeInstanceOf(BridgeUnavailableError)
    await expect(runBridge(mainnet, refusing, CHAIN)).rejects.toThrow(/takes deposits on its L1 \(chain 1\) only/)
    await expect(tick('bridge-ethereum', mainnet)).rejects.toMatchObject({ code: 'BRIDGE_UNAVAILABLE' })
    expect(await bridgeRows()).toEqual(before)
    expect(await usdcOf(hot())).toBe(USDC(160))
  })
})
