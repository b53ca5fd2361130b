/**
 * The bridge tick (runBridge) with the LIVE Derive adapter on a real anvil node and Postgres,
 * against TestSocketVault (a stand-in with the Socket vault's deposit interface). The route table
 * is the test's own, passed through the adapter's `routes` option: the anvil node runs with base's
 * chain id (8453), EXCHANGE_CHAIN_ID is Derive's 957, and the route names the registry's USDC (the
 * test's deployment), so `assertReady` passes on the same checks it makes in production. What the
 * journal gets: the approve's gas (slot 0 of the approve), `bridged` (slot 0 of the deposit) and
 * the deposit's gas plus the message fee it paid as msg.value (slot 1), once, each summing to zero.
 */
import { balanceOf, ownTxKey, PLATFORM_EXPENSE_OVERHEAD, platformGas, platformHot } from '@wh/ledger'
import { integrationContext, type RunningChain, startChain, TEST_PRIVATE_KEYS } from '@wh/testkit'
import {
  BridgeUnavailableError,
  type ChainClients,
  DERIVE_CHAIN_ID,
  DERIVE_FEE_MARGIN_BPS,
  DERIVE_MSG_GAS_LIMIT,
  DeriveBridgeAdapter,
  type DeriveRouteTable,
  deployTestUsdc,
  EXCHANGE_CHAIN_NAME,
  messageFeeWithMargin,
  socketVaultAbi,
  testSocketVaultAbi,
  testSocketVaultBytecode,
  testUsdcAbi,
} from '@wh/wallet'
import { Redis } from 'ioredis'
import { type Address, createPublicClient, createWalletClient, decodeEventLog, getAddress, type Hex, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { buildWorkerDeps } from '../src/deps'
import { bridgeAdapterFor, runBridge } from '../src/jobs/bridge/bridge'
import type { WorkerDeps } from '../src/ticks'

const silent = { info() {}, warn() {} }
const USDC = (n: number) => BigInt(n) * 1_000_000n
const CHAIN = 'base'
const BASE_CHAIN_ID = 8453
const CONNECTOR = getAddress('0x0000000000000000000000000000000000c0ffee')
/** quote = 1e12 wei at DERIVE_MSG_GAS_LIMIT (200,000) */
const FEE_PER_MSG_GAS_WEI = 5_000_000n
const APPROVE_AT_LEAST = USDC(1_000)

interface EventRow {
  type: string
  idempotency_key: string
  payload: Record<string, string | number>
}

describe('bridge tick with the live Derive adapter (Socket vault stand-in) on a real chain (docs/chains.md, spec 6.1)', () => {
  let chain: RunningChain
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  let redis: Redis
  let deps: WorkerDeps
  let clients: ChainClients
  let usdc: Address
  let vault: Address
  let adapter: DeriveBridgeAdapter
  const deployer = privateKeyToAccount(TEST_PRIVATE_KEYS[0])

  async function write(
    address: Address,
    abi: typeof testUsdcAbi | typeof testSocketVaultAbi,
    fn: string,
    args: unknown[],
  ) {
    const hash = await clients.walletClient.writeContract({
      account: deployer,
      address,
      abi,
      functionName: fn,
      args,
    } as never)
    await clients.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })
  }

  beforeAll(async () => {
    chain = await startChain({ chainId: BASE_CHAIN_ID })
    const transport = http(chain.rpcUrl)
    const walletClient = createWalletClient({ account: deployer, transport })
    const publicClient = createPublicClient({ transport })
    usdc = getAddress(await deployTestUsdc(walletClient, publicClient))
    const hash = await walletClient.deployContract({
      abi: testSocketVaultAbi,
      bytecode: testSocketVaultBytecode,
      args: [usdc, FEE_PER_MSG_GAS_WEI],
      chain: null,
    })
    vault = getAddress(
      (await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })).contractAddress as Address,
    )

    // no USDC_ADDRESS_LOCAL: the live wiring; the exchange chain is Derive's (the vaults' destination)
    ctx = await integrationContext({
      RPC_URL_BASE: chain.rpcUrl,
      EXCHANGE_CHAIN_ID: String(DERIVE_CHAIN_ID),
      BRIDGE_RETAIN_USDC: '100',
    })
    redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 })
    // base is the anvil node with its real chain id and the test's USDC (0 confirmations)
    deps = buildWorkerDeps(
      ctx.config,
      { sql: ctx.database.sql, redis, log: silent },
      { chains: { [CHAIN]: { chainId: BASE_CHAIN_ID, usdc, confirmations: 0 } } },
    )
    clients = deps.clients.get(CHAIN) as ChainClients
    const routes: DeriveRouteTable = {
      destinationChainId: DERIVE_CHAIN_ID,
      routes: {
        [CHAIN]: {
          chainId: BASE_CHAIN_ID,
          usdc,
          vault,
          connector: CONNECTOR,
          sources: { vault: 'test', connector: 'test' },
        },
      },
    }
    adapter = new DeriveBridgeAdapter({
      outbox: { sql: deps.sql, clients: deps.clients, registry: deps.registry },
      receiver: ctx.config.exchange.walletAddress,
      exchangeChainId: ctx.config.exchange.chainId,
      routes,
      approveAtLeastBaseUnits: APPROVE_AT_LEAST,
    })
    await write(vault, testSocketVaultAbi, 'setConnector', [CONNECTOR, USDC(1_000_000)])
  })
  afterAll(async () => {
    redis?.disconnect()
    await ctx?.database.close()
    await chain?.stop()
  })

  const hot = () => deps.hotWallet(CHAIN).address as Address
  const exchangeWallet = () => getAddress(ctx.config.exchange.walletAddress)
  const usdcOf = (a: Address) =>
    clients.publicClient.readContract({ address: usdc, abi: testUsdcAbi, functionName: 'balanceOf', args: [a] })
  const allowance = () =>
    clients.publicClient.readContract({
      address: usdc,
      abi: testUsdcAbi,
      functionName: 'allowance',
      args: [hot(), vault],
    })
  const mintToHot = (amount: bigint) => write(usdc, testUsdcAbi, 'mint', [hot(), amount])
  const rowsOf = (refId: string) =>
    ctx.database.sql<{ step: number; to_address: string; amount: string; state: string; tx_hash: Hex }[]>`
      select step, to_address, amount, state, tx_hash from outbound_txs
      where purpose = 'bridge' and ref_id = ${refId} order by step`
  const allEvents = () =>
    ctx.database.sql<EventRow[]>`select type, idempotency_key, payload from ledger_events order by idempotency_key`
  const eventsAbout = (txHash: Hex) =>
    ctx.database.sql<EventRow[]>`
      select type, idempotency_key, payload from ledger_events
      where idempotency_key like ${`tx:${CHAIN}:${txHash.toLowerCase()}:%`} order by idempotency_key`
  /** per event and currency, the postings' sum where it is not zero (must be none), and events without postings */
  async function unbalanced() {
    const sums = await ctx.database.sql<{ key: string; currency: string; sum: string }[]>`
      select e.idempotency_key as key, p.currency, sum(p.amount)::text as sum
      from ledger_events e join ledger_postings p on p.event_id = e.id
      group by e.idempotency_key, p.currency having sum(p.amount) <> 0`
    const bare = await ctx.database.sql<{ key: string }[]>`
      select e.idempotency_key as key from ledger_events e
      where not exists (select 1 from ledger_postings p where p.event_id = e.id)`
    return { sums, bare }
  }
  const nativeCost = async (hash: Hex) => {
    const r = await clients.publicClient.getTransactionReceipt({ hash })
    return r.gasUsed * r.effectiveGasPrice
  }

  it('runs only on the injected route: the live table refuses this deployment (its USDC is not the test one)', () => {
    expect(() => adapter.assertReady(CHAIN)).not.toThrow()
    const live = bridgeAdapterFor(deps)
    expect(live.name).toBe('derive-socket')
    expect(() => live.assertReady(CHAIN)).toThrow(BridgeUnavailableError)
  })

  it('the first bridge approves then deposits: gas_spent slot 0 of the approve, bridged slot 0 and gas + message fee at slot 1 of the deposit, once across a crash before the journal', async () => {
    await mintToHot(USDC(500))
    const overheadBefore = await balanceOf(ctx.database.sql, PLATFORM_EXPENSE_OVERHEAD, 'ETH')
    const vaultEthBefore = await clients.publicClient.getBalance({ address: vault })

    // killed after the deposit is final and before the journal's commit: nothing recorded
    await expect(
      runBridge(deps, adapter, CHAIN, {
        beforeRecord: () => {
          throw new Error('killed before the journal')
        },
      }),
    ).rejects.toThrow('killed before the journal')
    expect(await allEvents()).toEqual([])

    // the next run resumes the same transfer and journals it
    const r = await runBridge(deps, adapter, CHAIN)
    expect(r).toMatchObject({ status: 'bridged', amountBaseUnits: USDC(400), feeBaseUnits: 0n })
    if (r.status !== 'bridged') return
    const rows = await rowsOf(r.transferId)
    expect(rows.map((x) => [x.step, x.to_address, x.amount, x.state])).toEqual([
      [0, usdc, '400000000', 'confirmed'],
      [1, vault, '400000000', 'confirmed'],
    ])
    const approveHash = rows[0]?.tx_hash as Hex
    const depositHash = rows[1]?.tx_hash as Hex
    expect(r.txHash).toBe(depositHash)

    // what the chain says was paid: the receipts' gas and the deposit's msg.value
    const approveGas = await nativeCost(approveHash)
    const depositGas = await nativeCost(depositHash)
    const msgFeeWei = (await clients.publicClient.getTransaction({ hash: depositHash })).value
    const quote = await clients.publicClient.readContract({
      address: vault,
      abi: socketVaultAbi,
      functionName: 'getMinFees',
      args: [CONNECTOR, DERIVE_MSG_GAS_LIMIT],
    })
    expect(msgFeeWei).toBe(messageFeeWithMargin(quote, DERIVE_FEE_MARGIN_BPS))
    expect(msgFeeWei).toBeGreaterThan(0n)
    expect(approveGas).toBeGreaterThan(0n)
    expect(await clients.publicClient.getBalance({ address: vault })).toBe(vaultEthBefore + msgFeeWei)

    // on chain: the vault holds the amount, logged for the exchange wallet; the hot wallet keeps 100
    expect(await usdcOf(vault)).toBe(USDC(400))
    expect(await usdcOf(hot())).toBe(USDC(100))
    const deposit = await clients.publicClient.getTransactionReceipt({ hash: depositHash })
    expect(
      deposit.logs
        .filter((l) => getAddress(l.address) === vault)
        .map((l) => decodeEventLog({ abi: socketVaultAbi, data: l.data, topics: l.topics }).args),
    ).toEqual([{ connector: CONNECTOR, depositor: hot(), receiver: exchangeWallet(), depositAmount: USDC(400) }])

    // the journal: the approve's gas alone at its slot 0
    const approveEvents = await eventsAbout(approveHash)
    expect(approveEvents.map((e) => [e.type, e.idempotency_key])).toEqual([
      ['gas_spent', ownTxKey({ chain: CHAIN, txHash: approveHash, slot: 0 })],
    ])
    expect(approveEvents[0]?.payload).toMatchObject({ chain: CHAIN, currency: 'ETH', amount: approveGas.toString() })
    expect(approveEvents[0]?.payload.userId).toBeUndefined()
    // the deposit: bridged at slot 0 (no USDC fee), its gas plus the message fee at slot 1
    const depositEvents = await eventsAbout(depositHash)
    expect(depositEvents.map((e) => [e.type, e.idempotency_key])).toEqual([
      ['bridged', ownTxKey({ chain: CHAIN, txHash: depositHash, slot: 0 })],
      ['gas_spent', ownTxKey({ chain: CHAIN, txHash: depositHash, slot: 1 })],
    ])
    expect(depositEvents[0]?.payload).toMatchObject({
      fromChain: CHAIN,
      toChain: EXCHANGE_CHAIN_NAME,
      currency: 'USDC',
      amount: '400000000',
      feeAmount: '0',
    })
    expect(depositEvents[1]?.payload).toMatchObject({
      chain: CHAIN,
      currency: 'ETH',
      amount: (depositGas + msgFeeWei).toString(),
    })
    expect(depositEvents[1]?.payload.userId).toBeUndefined()
    expect(await allEvents()).toHaveLength(3)

    // every event balances per currency; the balances follow the chain
    expect(await unbalanced()).toEqual({ sums: [], bare: [] })
    const paidWei = approveGas + depositGas + msgFeeWei
    expect((await balanceOf(ctx.database.sql, PLATFORM_EXPENSE_OVERHEAD, 'ETH')) - overheadBefore).toBe(paidWei)
    expect(await balanceOf(ctx.database.sql, platformGas(CHAIN), 'ETH')).toBe(-paidWei)
    expect(await balanceOf(ctx.database.sql, platformHot(CHAIN), 'USDC')).toBe(-USDC(400))
    expect(await balanceOf(ctx.database.sql, platformHot(EXCHANGE_CHAIN_NAME), 'USDC')).toBe(USDC(400))

    // re-running the tick: idle, nothing signed, nothing recorded
    const before = await allEvents()
    expect(await runBridge(deps, adapter, CHAIN)).toEqual({ status: 'idle', surplusBaseUnits: 0n })
    expect(await runBridge(deps, adapter, CHAIN)).toEqual({ status: 'idle', surplusBaseUnits: 0n })
    expect(await allEvents()).toEqual(before)
    expect(await rowsOf(r.transferId)).toHaveLength(2)
    expect(await allowance()).toBe(APPROVE_AT_LEAST - USDC(400))
  })

  it('a second bridge reuses the allowance: no approve, no slot-0 gas event, only bridged and its slot-1 cost', async () => {
    const before = await allEvents()
    const rowsBefore = await ctx.database.sql`select id from outbound_txs where purpose = 'bridge'`
    await mintToHot(USDC(50))

    const r = await runBridge(deps, adapter, CHAIN)
    expect(r).toMatchObject({ status: 'bridged', amountBaseUnits: USDC(50), feeBaseUnits: 0n })
    if (r.status !== 'bridged') return
    // one new outbox row: the deposit (step 1), no approve
    expect((await rowsOf(r.transferId)).map((x) => [x.step, x.to_address, x.state])).toEqual([[1, vault, 'confirmed']])
    expect(await ctx.database.sql`select id from outbound_txs where purpose = 'bridge'`).toHaveLength(
      rowsBefore.length + 1,
    )
    expect(await allowance()).toBe(APPROVE_AT_LEAST - USDC(450))
    expect(await usdcOf(vault)).toBe(USDC(450))

    const gas = await nativeCost(r.txHash as Hex)
    const msgFeeWei = (await clients.publicClient.getTransaction({ hash: r.txHash as Hex })).value
    expect(msgFeeWei).toBeGreaterThan(0n)
    // exactly two new events, both about the deposit: nothing for an approve
    const beforeKeys = new Set(before.map((e) => e.idempotency_key))
    const added = (await allEvents()).filter((e) => !beforeKeys.has(e.idempotency_key))
    expect(added.map((e) => [e.type, e.idempotency_key])).toEqual([
      ['bridged', ownTxKey({ chain: CHAIN, txHash: r.txHash, slot: 0 })],
      ['gas_spent', ownTxKey({ chain: CHAIN, txHash: r.txHash, slot: 1 })],
    ])
    expect(added[0]?.payload).toMatchObject({ amount: '50000000', feeAmount: '0', currency: 'USDC' })
    expect(added[1]?.payload).toMatchObject({ currency: 'ETH', amount: (gas + msgFeeWei).toString() })
    expect(await unbalanced()).toEqual({ sums: [], bare: [] })
    expect(await balanceOf(ctx.database.sql, platformHot(EXCHANGE_CHAIN_NAME), 'USDC')).toBe(USDC(450))

    // and again: idle, nothing new
    const after = await allEvents()
    expect(await runBridge(deps, adapter, CHAIN)).toEqual({ status: 'idle', surplusBaseUnits: 0n })
    expect(await allEvents()).toEqual(after)
  })
})
