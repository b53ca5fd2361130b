/**
 * The bridge tick with the local adapter on a real chain and the Derive simulator: the hot
 * wallet's surplus crosses to EXCHANGE_WALLET_ADDRESS once, the simulator's wallet is credited
 * once, `bridged` (slot 0) and its gas (slot 1) are journaled once, across crashes. This is the legacy
 * v2 path (EXCHANGE_PROTOCOL=v2: a Derive Chain wallet); v3's L1 deposit is bridge-v3.test.ts's.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { type RunningSimulator, startDeriveSimulator } from '@wh/exchange'
import { append, balanceOf, ownTxKey, PLATFORM_EXPENSE_OVERHEAD, platformHot, reserveWithdrawal } from '@wh/ledger'
import { integrationContext, type RunningChain, startChain, TEST_PRIVATE_KEYS } from '@wh/testkit'
import { BridgeUnavailableError, type ChainClients, deployTestUsdc, EXCHANGE_CHAIN_NAME, testUsdcAbi } from '@wh/wallet'
import type { Job } from 'bullmq'
import { Redis } from 'ioredis'
import { type Address, createPublicClient, createWalletClient, type Hex, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { buildWorkerDeps } from '../src/deps'
import { bridgeAdapterFor, bridgeTicks, runBridge } from '../src/jobs/bridge/bridge'
import { ticks } from '../src/jobs/index'
import type { TickContext, WorkerDeps } from '../src/ticks'

const silent = { info() {}, warn() {} }
const USDC = (n: number) => BigInt(n) * 1_000_000n
const EXCHANGE_CHAIN_ID = 901
/** the local node stands in for every chain; it is bridged under the first name (isWatchedChain) */
const CHAIN = 'ethereum'

describe('bridge: hot wallet surplus to the exchange chain (docs/chains.md, spec 6.1)', () => {
  let chain: RunningChain
  let sim: RunningSimulator
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  let redis: Redis
  let deps: WorkerDeps
  let clients: ChainClients
  let usdc: Address
  let tickCtx: TickContext
  const deployer = privateKeyToAccount(TEST_PRIVATE_KEYS[0])

  beforeAll(async () => {
    chain = await startChain({ chainId: EXCHANGE_CHAIN_ID })
    sim = await startDeriveSimulator({ chainId: EXCHANGE_CHAIN_ID })
    const transport = http(chain.rpcUrl)
    usdc = await deployTestUsdc(createWalletClient({ account: deployer, transport }), createPublicClient({ transport }))
    ctx = await integrationContext({
      RPC_URL_ETHEREUM: chain.rpcUrl,
      RPC_URL_OPTIMISM: chain.rpcUrl,
      RPC_URL_BASE: chain.rpcUrl,
      RPC_URL_ARBITRUM: chain.rpcUrl,
      EXCHANGE_CHAIN_RPC_URL: chain.rpcUrl,
      EXCHANGE_CHAIN_ID: String(EXCHANGE_CHAIN_ID),
      EXCHANGE_PROTOCOL: 'v2',
      EXCHANGE_HTTP_URL: sim.httpUrl,
      EXCHANGE_WS_URL: sim.v3WsUrl,
      USDC_ADDRESS_LOCAL: usdc,
      BRIDGE_RETAIN_USDC: '100',
    })
    redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 })
    // the local run's wiring: configuredChainOverrides from USDC_ADDRESS_LOCAL (0 confirmations)
    deps = buildWorkerDeps(ctx.config, { sql: ctx.database.sql, redis, log: silent })
    clients = deps.clients.get(CHAIN) as ChainClients
    tickCtx = { log: silent, deps, queues: new Map() }
  })
  afterAll(async () => {
    redis?.disconnect()
    await ctx?.database.close()
    await sim?.close()
    await chain?.stop()
  })

  const exchangeWallet = () => ctx.config.exchange.walletAddress
  const usdcOf = (a: Address) =>
    clients.publicClient.readContract({ address: usdc, abi: testUsdcAbi, functionName: 'balanceOf', args: [a] })
  const simUsdc = () => sim.control.walletBalance(exchangeWallet(), 'USDC')
  async function mintToHot(amount: bigint) {
    const hash = await clients.walletClient.writeContract({
      account: deployer,
      address: usdc,
      abi: testUsdcAbi,
      functionName: 'mint',
      args: [deps.hotWallet(CHAIN).address, amount],
    })
    await clients.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })
  }
  async function eventsAbout(txHash: string) {
    return ctx.database.sql<{ type: string; idempotency_key: string; payload: Record<string, string> }[]>`
      select type, idempotency_key, payload from ledger_events
      where idempotency_key like ${`tx:${CHAIN}:${txHash.toLowerCase()}:%`} order by idempotency_key`
  }
  async function bridgeRows() {
    return ctx.database.sql<{ ref_id: string; tx_hash: string; state: string; amount: string; to_address: string }[]>`
      select ref_id, tx_hash, state, amount, to_address from outbound_txs where purpose = 'bridge' order by created_at`
  }
  const tick = (name: string) => {
    const t = bridgeTicks.find((x) => x.name === name)
    if (!t) throw new Error(`no tick ${name}`)
    return t.process({} as Job, tickCtx) as Promise<Record<string, unknown>>
  }

  it('is registered on the treasury queue, one tick per chain, and a node standing in for several chains is bridged once', async () => {
    expect(bridgeTicks.map((t) => [t.name, t.queue])).toEqual([
      ['bridge-ethereum', 'treasury'],
      ['bridge-optimism', 'treasury'],
      ['bridge-base', 'treasury'],
      ['bridge-arbitrum', 'treasury'],
    ])
    for (const t of bridgeTicks) expect(ticks).toContain(t)
    expect(await tick('bridge-base')).toEqual({ chain: 'base', status: 'same-node-as-another-chain' })
    expect(bridgeAdapterFor(deps).name).toBe('local')
  })

  it('moves the surplus above the retained amount and the requested withdrawals, once; records bridged (slot 0) and its gas (slot 1)', async () => {
    await mintToHot(USDC(500))
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
      const r = await reserveWithdrawal(tx, { userId, currency: 'USDC', amount: USDC(50) })
      await tx`update withdrawals set chain = ${CHAIN} where id = ${r.withdrawalId}`
    })
    const overheadBefore = await balanceOf(ctx.database.sql, PLATFORM_EXPENSE_OVERHEAD, 'ETH')

    const r = await tick('bridge-ethereum')
    expect(r).toMatchObject({ chain: CHAIN, status: 'bridged', amountBaseUnits: '350000000', feeBaseUnits: '0' })
    const txHash = r.txHash as Hex
    const [row] = await bridgeRows()
    expect(row).toMatchObject({
      state: 'confirmed',
      amount: '350000000',
      to_address: exchangeWallet(),
      tx_hash: txHash,
    })
    // on chain: the exchange wallet holds it; the hot wallet keeps 100 retained + 50 reserved
    expect(await usdcOf(exchangeWallet())).toBe(USDC(350))
    expect(await usdcOf(deps.hotWallet(CHAIN).address)).toBe(USDC(150))
    // the simulator stands in for the relay: the exchange wallet's balance there is credited
    expect(simUsdc()).toBe('350')

    const events = await eventsAbout(txHash)
    expect(events.map((e) => [e.type, e.idempotency_key])).toEqual([
      ['bridged', ownTxKey({ chain: CHAIN, txHash, slot: 0 })],
      ['gas_spent', ownTxKey({ chain: CHAIN, txHash, slot: 1 })],
    ])
    expect(events[0]?.payload).toMatchObject({
      fromChain: CHAIN,
      toChain: EXCHANGE_CHAIN_NAME,
      currency: 'USDC',
      amount: '350000000',
      feeAmount: '0',
    })
    const receipt = await clients.publicClient.getTransactionReceipt({ hash: txHash })
    const gas = receipt.gasUsed * receipt.effectiveGasPrice
    expect(events[1]?.payload).toMatchObject({ currency: 'ETH', amount: gas.toString() })
    expect(events[1]?.payload.userId).toBeUndefined()
    expect((await balanceOf(ctx.database.sql, PLATFORM_EXPENSE_OVERHEAD, 'ETH')) - overheadBefore).toBe(gas)
    expect(await balanceOf(ctx.database.sql, platformHot(CHAIN), 'USDC')).toBe(-USDC(350))
    expect(await balanceOf(ctx.database.sql, platformHot(EXCHANGE_CHAIN_NAME), 'USDC')).toBe(USDC(350))

    // nothing left above the retained amount: idle, nothing sent, nothing journaled
    expect(await tick('bridge-ethereum')).toMatchObject({ status: 'idle', surplusBaseUnits: '0' })
    expect(await bridgeRows()).toHaveLength(1)
    expect(simUsdc()).toBe('350')
  })

  it('a worker killed after signing resumes the very same transaction: one transfer, one credit, one set of events', async () => {
    await mintToHot(USDC(40))
    let signed: Hex | undefined
    const crashing = bridgeAdapterFor(deps, {
      afterSigned: (rec) => {
        signed = rec.txHash
        throw new Error('killed after signing')
      },
    })
    await expect(runBridge(deps, crashing, CHAIN)).rejects.toThrow('killed after signing')
    expect((await bridgeRows()).at(-1)).toMatchObject({ state: 'signed', tx_hash: signed, amount: '40000000' })
    await expect(clients.publicClient.getTransaction({ hash: signed as Hex })).rejects.toThrow()

    // more arrives meanwhile: the open transfer is finished first, with the amount it signed
    await mintToHot(USDC(5))
    expect(await runBridge(deps, bridgeAdapterFor(deps), CHAIN)).toMatchObject({
      status: 'bridged',
      txHash: signed,
      amountBaseUnits: USDC(40),
    })
    expect(simUsdc()).toBe('390')
    expect((await eventsAbout(signed as string)).map((e) => e.type)).toEqual(['bridged', 'gas_spent'])
    // then the next run bridges what arrived meanwhile
    expect(await runBridge(deps, bridgeAdapterFor(deps), CHAIN)).toMatchObject({
      status: 'bridged',
      amountBaseUnits: USDC(5),
    })
    expect(await usdcOf(exchangeWallet())).toBe(USDC(395))
    expect(simUsdc()).toBe('395')
  })

  it('a crash after the simulator credit and before the journal records once and never credits twice', async () => {
    await mintToHot(USDC(7))
    await expect(
      runBridge(deps, bridgeAdapterFor(deps), CHAIN, {
        beforeRecord: () => {
          throw new Error('killed before the journal')
        },
      }),
    ).rejects.toThrow('killed before the journal')
    expect(simUsdc()).toBe('402')
    const open = (await bridgeRows()).at(-1)
    expect(await eventsAbout(open?.tx_hash as string)).toHaveLength(0)

    expect(await runBridge(deps, bridgeAdapterFor(deps), CHAIN)).toMatchObject({
      status: 'bridged',
      txHash: open?.tx_hash,
    })
    expect(simUsdc()).toBe('402')
    expect((await eventsAbout(open?.tx_hash as string)).map((e) => e.type)).toEqual(['bridged', 'gas_spent'])
    expect(await balanceOf(ctx.database.sql, platformHot(EXCHANGE_CHAIN_NAME), 'USDC')).toBe(USDC(402))
  })

  it('outside the local run, v2 (retired by Derive, its Socket route with it) refuses with a clear error and sends nothing', async () => {
    await mintToHot(USDC(10))
    const live: WorkerDeps = { ...deps, config: { ...deps.config, usdcAddressLocal: undefined } }
    const adapter = bridgeAdapterFor(live)
    expect(adapter.name).toBe('derive-v2-retired')
    const run = runBridge(live, adapter, CHAIN)
    await expect(run).rejects.toBeInstanceOf(BridgeUnavailableError)
    await expect(runBridge(live, adapter, CHAIN)).rejects.toThrow(/no live bridge: the exchange moved to v3/)
    await expect(
      bridgeTicks[0]?.process({} as Job, { ...tickCtx, deps: live }) as Promise<unknown>,
    ).rejects.toMatchObject({ code: 'BRIDGE_UNAVAILABLE' })
    // nothing was signed or sent
    expect((await bridgeRows()).every((r) => r.state === 'confirmed')).toBe(true)
  })
})
