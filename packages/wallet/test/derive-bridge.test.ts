/**
 * The live Derive adapter on a real anvil node and Postgres, against TestSocketVault, a stand-in
 * with the Socket vault's deposit interface (the live table points at the real vaults): approve
 * once, deposit to the receiver paying the quoted fee plus margin, crash-safe legs, allowance
 * reuse, and refusals that sign nothing.
 */
import { randomUUID } from 'node:crypto'
import { integrationContext, type RunningChain, startChain, TEST_PRIVATE_KEYS } from '@wh/testkit'
import {
  type Address,
  createPublicClient,
  createWalletClient,
  decodeEventLog,
  getAddress,
  type Hex,
  http,
  type LocalAccount,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testSocketVaultAbi, testSocketVaultBytecode } from '../src/contracts/test-socket-vault'
import {
  BridgeFeeTooHighError,
  BridgeLimitError,
  type BridgeTransfer,
  buildChainClients,
  buildChainRegistry,
  type ChainClients,
  DERIVE_CHAIN_ID,
  DERIVE_FEE_MARGIN_BPS,
  DERIVE_MSG_GAS_LIMIT,
  DeriveBridgeAdapter,
  type DeriveRouteTable,
  deployTestUsdc,
  messageFeeWithMargin,
  type OutboxDeps,
  socketVaultAbi,
  storedTransaction,
  testUsdcAbi,
} from '../src/index'

const USDC = (n: number) => BigInt(n) * 1_000_000n
const deployer = privateKeyToAccount(TEST_PRIVATE_KEYS[0])
const hot = privateKeyToAccount(TEST_PRIVATE_KEYS[3])
const RECEIVER = getAddress('0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed')
const CONNECTOR = getAddress('0x0000000000000000000000000000000000c0ffee')
const FEE_PER_MSG_GAS_WEI = 5_000_000n // quote = 1e12 wei at 200,000 gas
const APPROVE_AT_LEAST = USDC(1_000)

describe('Derive bridge adapter (Socket vault deposit) on a real chain', () => {
  let chain: RunningChain
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  let deps: OutboxDeps
  let base: ChainClients
  let usdc: Address
  let vault: Address
  let routes: DeriveRouteTable

  async function write(
    address: Address,
    abi: typeof testUsdcAbi | typeof testSocketVaultAbi,
    functionName: string,
    args: unknown[],
  ) {
    const hash = await base.walletClient.writeContract({ account: deployer, address, abi, functionName, args } as never)
    await base.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })
  }

  beforeAll(async () => {
    chain = await startChain({ chainId: 8453 })
    ctx = await integrationContext({ RPC_URL_BASE: chain.rpcUrl })
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
    const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })
    vault = getAddress(receipt.contractAddress as Address)
    const registry = buildChainRegistry(ctx.config, { base: { chainId: chain.chainId, usdc, confirmations: 0 } })
    const clients = buildChainClients(registry)
    deps = { sql: ctx.database.sql, clients, registry }
    base = clients.get('base') as ChainClients
    routes = {
      destinationChainId: DERIVE_CHAIN_ID,
      routes: {
        base: {
          chainId: chain.chainId,
          usdc,
          vault,
          connector: CONNECTOR,
          sources: { vault: 'test', connector: 'test' },
        },
      },
    }
    await write(vault, testSocketVaultAbi, 'setConnector', [CONNECTOR, USDC(1_000_000)])
    await write(usdc, testUsdcAbi, 'mint', [hot.address, USDC(10_000)])
    await write(usdc, testUsdcAbi, 'mint', [privateKeyToAccount(TEST_PRIVATE_KEYS[1]).address, USDC(10_000)])
  })
  afterAll(async () => {
    await ctx?.database.close()
    await chain?.stop()
  })

  const adapter = (hooks?: OutboxDeps['hooks']) =>
    new DeriveBridgeAdapter({
      outbox: hooks ? { ...deps, hooks } : deps,
      receiver: RECEIVER,
      exchangeChainId: DERIVE_CHAIN_ID,
      routes,
      approveAtLeastBaseUnits: APPROVE_AT_LEAST,
    })
  const transfer = (amountBaseUnits: bigint, signer: LocalAccount = hot): BridgeTransfer => ({
    transferId: randomUUID(),
    fromChain: 'base',
    token: 'USDC',
    amountBaseUnits,
    signer,
  })
  const rowsOf = (refId: string) =>
    ctx.database.sql<{ step: number; to_address: string; amount: string; state: string; tx_hash: string }[]>`
      select step, to_address, amount, state, tx_hash from outbound_txs
      where purpose = 'bridge' and ref_id = ${refId} order by step`
  const usdcOf = (a: Address) =>
    base.publicClient.readContract({ address: usdc, abi: testUsdcAbi, functionName: 'balanceOf', args: [a] })
  const allowanceOf = (owner: Address) =>
    base.publicClient.readContract({ address: usdc, abi: testUsdcAbi, functionName: 'allowance', args: [owner, vault] })
  async function depositEvents(txHash: Hex) {
    const receipt = await base.publicClient.getTransactionReceipt({ hash: txHash })
    return receipt.logs
      .filter((l) => getAddress(l.address) === vault)
      .map((l) => decodeEventLog({ abi: socketVaultAbi, data: l.data, topics: l.topics }).args)
  }

  it('approves the vault once, then deposits the amount to the receiver paying the quoted fee plus margin', async () => {
    const t = transfer(USDC(350))
    const a = adapter()
    const quote = await base.publicClient.readContract({
      address: vault,
      abi: socketVaultAbi,
      functionName: 'getMinFees',
      args: [CONNECTOR, DERIVE_MSG_GAS_LIMIT],
    })
    expect(quote).toBe(FEE_PER_MSG_GAS_WEI * DERIVE_MSG_GAS_LIMIT)
    const vaultEthBefore = await base.publicClient.getBalance({ address: vault })

    const sent = await a.send(t)
    const status = await a.status(t, sent)
    expect(status.state).toBe('delivered')
    if (status.state !== 'delivered') return
    const paid = messageFeeWithMargin(quote, DERIVE_FEE_MARGIN_BPS)
    expect(status.messageFeeWei).toBe(paid)
    expect(status.feeBaseUnits).toBe(0n)

    // two outbox rows: step 0 the approve (to USDC), step 1 the deposit (to the vault), both final
    const rows = await rowsOf(t.transferId)
    expect(rows.map((r) => [r.step, r.to_address, r.amount, r.state])).toEqual([
      [0, usdc, '350000000', 'confirmed'],
      [1, vault, '350000000', 'confirmed'],
    ])
    expect(status.record.txHash).toBe(rows[1]?.tx_hash)
    expect(status.earlierLegs?.map((r) => r.txHash)).toEqual([rows[0]?.tx_hash])
    expect(status.earlierLegs?.[0]?.gasUsed).toBeGreaterThan(0n)

    // what was signed: the deposit carries the fee as value
    const stored = await storedTransaction(deps, status.record.id)
    expect(stored.valueWei).toBe(paid)
    expect(await base.publicClient.getBalance({ address: vault })).toBe(vaultEthBefore + paid)

    // on chain: the vault pulled the amount and logged the deposit for the receiver via the connector
    expect(await usdcOf(vault)).toBe(USDC(350))
    expect(await depositEvents(status.record.txHash)).toEqual([
      { connector: CONNECTOR, depositor: hot.address, receiver: RECEIVER, depositAmount: USDC(350) },
    ])
    expect(await allowanceOf(hot.address)).toBe(APPROVE_AT_LEAST - USDC(350))

    // idempotent: asking again changes nothing
    expect((await a.status(t, sent)).state).toBe('delivered')
    expect(await rowsOf(t.transferId)).toHaveLength(2)
  })

  it('a second bridge reuses the allowance: no approve, one deposit', async () => {
    const t = transfer(USDC(100))
    const a = adapter()
    const status = await a.status(t, await a.send(t))
    expect(status.state).toBe('delivered')
    expect((await rowsOf(t.transferId)).map((r) => r.step)).toEqual([1])
    expect(status.state === 'delivered' && status.earlierLegs).toEqual([])
    expect(await allowanceOf(hot.address)).toBe(APPROVE_AT_LEAST - USDC(450))
    expect(await usdcOf(vault)).toBe(USDC(450))
  })

  it('a crash between signing the deposit and its broadcast: the retry sends the very same bytes, once', async () => {
    const t = transfer(USDC(25))
    let signed: Hex | undefined
    const crashing = adapter({
      afterSigned: (rec) => {
        signed = rec.txHash
        throw new Error('killed after signing')
      },
    })
    await expect(crashing.send(t)).rejects.toThrow('killed after signing')
    const [row] = await rowsOf(t.transferId)
    expect(row).toMatchObject({ step: 1, state: 'signed', tx_hash: signed })
    await expect(base.publicClient.getTransaction({ hash: signed as Hex })).rejects.toThrow()

    // the fee quote rises meanwhile: the stored transaction (and its value) is the one sent
    await write(vault, testSocketVaultAbi, 'setFeePerMsgGas', [FEE_PER_MSG_GAS_WEI + 1n])
    const a = adapter()
    const resumed = await a.send(t)
    expect(resumed.txHash).toBe(signed)
    const status = await a.status(t, resumed)
    expect(status).toMatchObject({ state: 'delivered', messageFeeWei: messageFeeWithMargin(10n ** 12n, 1_000n) })
    expect(await depositEvents(signed as Hex)).toHaveLength(1)
    expect(await usdcOf(vault)).toBe(USDC(475))
    expect(await rowsOf(t.transferId)).toHaveLength(1)
    await write(vault, testSocketVaultAbi, 'setFeePerMsgGas', [FEE_PER_MSG_GAS_WEI])
  })

  it('a crash between signing the approve and its broadcast: the same approve is sent, then the deposit', async () => {
    const fresh = privateKeyToAccount(TEST_PRIVATE_KEYS[1])
    const t = transfer(USDC(60), fresh)
    let signed: Hex | undefined
    const crashing = adapter({
      afterSigned: (rec) => {
        signed = rec.txHash
        throw new Error('killed after signing')
      },
    })
    await expect(crashing.send(t)).rejects.toThrow('killed after signing')
    expect(await rowsOf(t.transferId)).toMatchObject([{ step: 0, state: 'signed', tx_hash: signed, to_address: usdc }])
    expect(await allowanceOf(fresh.address)).toBe(0n)

    const a = adapter()
    const status = await a.status(t, await a.send(t))
    expect(status.state).toBe('delivered')
    const rows = await rowsOf(t.transferId)
    expect(rows.map((r) => [r.step, r.state])).toEqual([
      [0, 'confirmed'],
      [1, 'confirmed'],
    ])
    expect(rows[0]?.tx_hash).toBe(signed)
    expect(await allowanceOf(fresh.address)).toBe(APPROVE_AT_LEAST - USDC(60))
    expect(await depositEvents(rows[1]?.tx_hash as Hex)).toEqual([
      { connector: CONNECTOR, depositor: fresh.address, receiver: RECEIVER, depositAmount: USDC(60) },
    ])
  })

  it('refuses, signing nothing, when the quote is above the bound or the amount above the lock limit', async () => {
    await write(vault, testSocketVaultAbi, 'setFeePerMsgGas', [10n ** 12n]) // quote 0.2 ETH
    const t1 = transfer(USDC(5))
    await expect(adapter().send(t1)).rejects.toBeInstanceOf(BridgeFeeTooHighError)
    await write(vault, testSocketVaultAbi, 'setFeePerMsgGas', [FEE_PER_MSG_GAS_WEI])

    const t2 = transfer(USDC(2_000_000))
    await write(usdc, testUsdcAbi, 'mint', [hot.address, USDC(2_000_000)])
    await expect(adapter({}).send({ ...t2 })).rejects.toBeInstanceOf(BridgeLimitError)
    // the approve this transfer needed is there (harmless), the deposit is not
    expect((await rowsOf(t1.transferId)).length).toBe(0)
    expect((await rowsOf(t2.transferId)).map((r) => r.step)).toEqual([0])
  })

  it('refuses a connector the vault does not know (limit 0) before any deposit', async () => {
    const unknown = {
      ...routes,
      routes: { base: { ...(routes.routes.base as NonNullable<typeof routes.routes.base>), connector: RECEIVER } },
    }
    const a = new DeriveBridgeAdapter({
      outbox: deps,
      receiver: RECEIVER,
      exchangeChainId: DERIVE_CHAIN_ID,
      routes: unknown,
    })
    const t = transfer(USDC(1))
    await expect(a.send(t)).rejects.toBeInstanceOf(BridgeLimitError)
    expect((await rowsOf(t.transferId)).filter((r) => r.step === 1)).toHaveLength(0)
  })
})
