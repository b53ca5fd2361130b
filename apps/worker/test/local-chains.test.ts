/**
 * Four chains, not four names for one (docs/chains.md "Local run: four chains"): the local run's layout,
 * one anvil per chain under its own id with its own TestUSDC, and the worker built from the configuration
 * as main.ts builds it. Each chain's deposit scan reads its own node and credits under its own name; the hot
 * wallet's nonces are per chain, so a withdrawal paid on Arbitrum takes nothing from the L1's sequence (the
 * local run's bridge deposit once waited behind such a withdrawal); every node answers the id the
 * configuration names.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { addressBookFor, scanChainDeposits } from '@wh/deposits'
import { append, reserveWithdrawal } from '@wh/ledger'
import { integrationContext, type LocalChains, localChainsEnv, startLocalChains, TEST_PRIVATE_KEYS } from '@wh/testkit'
import {
  CHAIN_NAMES,
  ChainGuard,
  type ChainName,
  checkChainsAtStart,
  confirmOutbound,
  deployTestUsdcs,
  sendOnce,
  testUsdcAbi,
} from '@wh/wallet'
import { sendWithdrawals, withdrawalSendDeps } from '@wh/withdrawals'
import { Redis } from 'ioredis'
import { type Address, getAddress } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { buildWorkerDeps } from '../src/deps'
import type { WorkerDeps } from '../src/ticks'

const silent = { info() {}, warn() {} }
const USDC = (n: number) => BigInt(n) * 1_000_000n
const deployer = privateKeyToAccount(TEST_PRIVATE_KEYS[0])

describe('the local run has four chains, not four names for one', () => {
  let chains: LocalChains
  let usdc: Record<ChainName, Address>
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  let redis: Redis
  let deps: WorkerDeps

  beforeAll(async () => {
    chains = await startLocalChains()
    usdc = await deployTestUsdcs(chains, TEST_PRIVATE_KEYS[0])
    ctx = await integrationContext(localChainsEnv(chains, usdc))
    redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 })
    deps = buildWorkerDeps(ctx.config, { sql: ctx.database.sql, redis, log: silent })
  })
  afterAll(async () => {
    redis?.disconnect()
    await ctx?.database.close()
    await chains?.stop()
  })

  const clientsOf = (chain: ChainName) => {
    const c = deps.clients.get(chain)
    if (!c) throw new Error(`no clients for ${chain}`)
    return c
  }
  async function mint(chain: ChainName, to: Address, amount: bigint) {
    const c = clientsOf(chain)
    const hash = await c.walletClient.writeContract({
      account: deployer,
      address: usdc[chain],
      abi: testUsdcAbi,
      functionName: 'mint',
      args: [to, amount],
    })
    await c.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })
    return hash.toLowerCase()
  }
  const nonceOf = (chain: ChainName, address: Address) =>
    clientsOf(chain).publicClient.getTransactionCount({ address, blockTag: 'pending' })

  it('each node answers the id the configuration names, with a TestUSDC of its own', async () => {
    expect(await checkChainsAtStart(new ChainGuard(deps.registry, deps.clients))).toEqual([])
    expect(CHAIN_NAMES.map((c) => deps.registry.get(c)?.chainId)).toEqual(CHAIN_NAMES.map((c) => chains[c].chainId))
    expect(new Set(CHAIN_NAMES.map((c) => chains[c].chainId)).size).toBe(4)
    expect(deps.registry.get('ethereum')?.chainId).toBe(ctx.config.exchange.chainId)
    expect(new Set(Object.values(usdc)).size).toBe(4)
    for (const c of CHAIN_NAMES)
      expect(deps.registry.get(c)?.tokens.find((t) => t.symbol === 'USDC')?.contract).toBe(usdc[c])
  })

  it("each chain's scan reads its own node and credits under its own name, once", async () => {
    const hdIndex = 1000
    const [user] = await ctx.database.sql<{ id: string }[]>`
      insert into users (wallet_address, hd_index)
      values (${getAddress(`0x${randomBytes(20).toString('hex')}`)}, ${hdIndex}) returning id`
    const address = deps.keyring.address(hdIndex)
    // the same deposit address on two chains, two amounts
    const onBase = await mint('base', address, USDC(7))
    const onArbitrum = await mint('arbitrum', address, USDC(11))
    const scanDeps = { ...deps, addressBook: addressBookFor(deps) }
    for (const c of CHAIN_NAMES)
      for (let i = 0; i < 10 && (await scanChainDeposits(scanDeps, c)).status === 'scanned'; i++);
    const rows = await ctx.database.sql<{ chain: string; tx_hash: string; amount: string }[]>`
      select chain, tx_hash, amount::text from deposits where user_id = ${user?.id as string} order by chain`
    expect(rows).toEqual([
      { chain: 'arbitrum', tx_hash: onArbitrum, amount: USDC(11).toString() },
      { chain: 'base', tx_hash: onBase, amount: USDC(7).toString() },
    ])
    const keys = await ctx.database.sql<{ idempotency_key: string }[]>`
      select idempotency_key from ledger_events where type = 'deposit_detected' order by idempotency_key`
    expect(keys.map((k) => k.idempotency_key)).toEqual([`tx:arbitrum:${onArbitrum}:0`, `tx:base:${onBase}:0`])
  })

  it("the hot wallet's nonces are per chain: a withdrawal paid on Arbitrum leaves the L1's sequence as it was", async () => {
    const hot = deps.hotWallet('arbitrum')
    await mint('arbitrum', hot.address, USDC(100))
    const l1Before = await nonceOf('ethereum', hot.address)
    const arbitrumBefore = await nonceOf('arbitrum', hot.address)
    // a user's USDC withdrawal on Arbitrum, through the withdrawal tick and the outbox
    const userId = randomUUID()
    await append(ctx.database.sql, {
      type: 'deposit_detected',
      payload: {
        userId,
        chain: 'arbitrum',
        txHash: `0x${randomBytes(32).toString('hex')}`,
        logIndex: 0,
        currency: 'USDC',
        amount: USDC(30),
      },
      occurredAt: new Date(),
    })
    const destination = getAddress(`0x${randomBytes(20).toString('hex')}`)
    const withdrawalId = await ctx.database.sql.begin(async (tx) => {
      const w = await reserveWithdrawal(tx, { userId, currency: 'USDC', amount: USDC(25) })
      await tx`update withdrawals set chain = 'arbitrum', destination = ${destination} where id = ${w.withdrawalId}`
      return w.withdrawalId
    })
    await sendWithdrawals(withdrawalSendDeps(deps, silent))
    const [row] = await ctx.database.sql<{ state: string; nonce: string }[]>`
      select w.state, o.nonce::text from withdrawals w join outbound_txs o on o.ref_id = w.id::text
      where w.id = ${withdrawalId}`
    expect(row).toEqual({ state: 'sent', nonce: String(arbitrumBefore) })
    expect(await nonceOf('arbitrum', hot.address)).toBe(arbitrumBefore + 1)
    expect(await nonceOf('ethereum', hot.address)).toBe(l1Before)

    // the L1's next transaction of the same key takes the L1's next nonce, and is mined
    const l1 = await sendOnce(
      { sql: ctx.database.sql, clients: deps.clients, registry: deps.registry },
      {
        chain: 'ethereum',
        purpose: 'bridge',
        refId: randomUUID(),
        step: 0,
        signer: deps.hotWallet('ethereum'),
        to: deps.hotWallet('ethereum').address,
        token: 'ETH',
        amountBaseUnits: 1n,
      },
    )
    expect(l1.nonce).toBe(l1Before)
    const done = await confirmOutbound({ sql: ctx.database.sql, clients: deps.clients, registry: deps.registry }, l1.id)
    expect(done.state).toBe('confirmed')
  })
})
