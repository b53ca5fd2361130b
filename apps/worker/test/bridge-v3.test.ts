/**
 * Money in on Derive v3, whole: the bridge tick (runBridge) with the v3 adapter deposits the hot
 * wallet's USDC on L1 through the OnchainActionManager stand-in into the platform's funding
 * subaccount, the journal records `bridged` and the gas once, and the Derive simulator's L1 watcher
 * credits the subaccount once the deposit is final. Real anvil, Postgres, Redis and simulator.
 */
import { type RunningSimulator, startDeriveSimulator, watchL1Deposits } from '@wh/exchange'
import { balanceOf, ownTxKey, platformHot } from '@wh/ledger'
import { integrationContext, type RunningChain, startChain, TEST_PRIVATE_KEYS } from '@wh/testkit'
import {
  BridgeUnavailableError,
  type ChainClients,
  DeriveV3DepositAdapter,
  deployTestOnchainActionManager,
  deployTestUsdc,
  EXCHANGE_CHAIN_NAME,
  testOnchainActionManagerAbi,
  testUsdcAbi,
} from '@wh/wallet'
import { Redis } from 'ioredis'
import { type Address, createPublicClient, createWalletClient, getAddress, type Hex, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { buildWorkerDeps } from '../src/deps'
import { runBridge } from '../src/jobs/bridge/bridge'
import type { WorkerDeps } from '../src/ticks'

const silent = { info() {}, warn() {} }
const USDC = (n: number) => BigInt(n) * 1_000_000n
const E12 = 10n ** 12n
const CHAIN = 'ethereum'
/** the L1 and the v3 signing domain share this id, as Ethereum (1) or Sepolia do */
const L1_CHAIN_ID = 11_155_111
const APPROVE_AT_LEAST = USDC(1_000)

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
  let adapter: DeriveV3DepositAdapter
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

    ctx = await integrationContext({
      RPC_URL_ETHEREUM: chain.rpcUrl,
      EXCHANGE_CHAIN_ID: String(L1_CHAIN_ID),
      BRIDGE_RETAIN_USDC: '100',
    })
    redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 })
    deps = buildWorkerDeps(
      ctx.config,
      { sql: ctx.database.sql, redis, log: silent },
      { chains: { [CHAIN]: { chainId: L1_CHAIN_ID, usdc, confirmations: 0 } } },
    )
    clients = deps.clients.get(CHAIN) as ChainClients

    // the platform's funding subaccount: opened by a first deposit for the owner (v3 has no create call)
    watcher = watchL1Deposits(sim.engine, { rpcUrl: chain.rpcUrl, manager, confirmations: 1, pollMs: 0 })
    await write(usdc, testUsdcAbi, 'mint', [deployer.address, USDC(1)])
    await write(usdc, testUsdcAbi, 'approve', [manager, USDC(1)])
    await write(manager, testOnchainActionManagerAbi, 'depositToNewSubaccount', [usdcAsset, USDC(1), 1, owner()])
    await publicClient.request({ method: 'anvil_mine' as never, params: ['0x1'] as never })
    expect(await watcher.poll()).toBe(1)
    const opened = [...sim.engine.subaccounts.values()].filter((s) => s.wallet === owner() && s.label !== 'fallback')
    fundingSubaccount = opened[0]?.id ?? 0
    expect(creditedUsdc()).toBe(USDC(1) * E12)

    adapter = new DeriveV3DepositAdapter({
      outbox: { sql: deps.sql, clients: deps.clients, registry: deps.registry },
      manager,
      usdcAsset: async () => usdcAsset,
      fundingSubaccountId: BigInt(fundingSubaccount),
      owner: owner(),
      exchangeChainId: ctx.config.exchange.chainId,
      approveAtLeastBaseUnits: APPROVE_AT_LEAST,
    })
  }, 60_000)
  afterAll(async () => {
    await watcher?.stop()
    redis?.disconnect()
    await ctx?.database.close()
    await sim?.close()
    await chain?.stop()
  })

  it('deposits only from the L1 the exchange signs for: another chain is refused, never guessed', () => {
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
})
