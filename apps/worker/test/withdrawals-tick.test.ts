/**
 * The withdrawal tick on the real outbox (packages/wallet/src/outbox.ts) and a real chain: what
 * withdrawals.test.ts checks through a stand-in sender, here end to end through the registered
 * tick, the outbox's rows and the node.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { append, balanceOf, freeBalance, ownTxKey, reserveWithdrawal, userTransit } from '@wh/ledger'
import { integrationContext, type RunningChain, startChain } from '@wh/testkit'
import { type ChainClients, deployTestUsdc, testUsdcAbi } from '@wh/wallet'
import { sendWithdrawals, type WithdrawalSendSummary, withdrawalSendDeps } from '@wh/withdrawals'
import type { Job } from 'bullmq'
import { Redis } from 'ioredis'
import { type Address, createPublicClient, createTestClient, createWalletClient, http, parseEther } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { buildWorkerDeps } from '../src/deps'
import { ticks } from '../src/jobs/index'
import { withdrawalSendTick } from '../src/jobs/withdrawals/ticks'
import type { TickContext, WorkerDeps } from '../src/ticks'

const silent = { info() {}, warn() {} }
const DEST: Address = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'
const USDC = (n: number) => BigInt(n) * 1_000_000n
/** blocks on top of a withdrawal's block before it counts as sent, on this test's `base` */
const CONFIRMATIONS = 1

describe('withdrawals-send tick on the real outbox and a real chain (spec 4.2, 6.1)', () => {
  let chain: RunningChain
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  let redis: Redis
  let deps: WorkerDeps
  let base: ChainClients
  let usdc: Address
  let tickCtx: TickContext
  let mine: (blocks?: number) => Promise<void>
  const deployer = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80')

  beforeAll(async () => {
    chain = await startChain({ chainId: 8453 })
    ctx = await integrationContext({
      // base's node; the other chains' RPCs answer nothing (testEnv): a test of one chain
      RPC_URL_BASE: chain.rpcUrl,
    })
    redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 })
    const transport = http(chain.rpcUrl)
    usdc = await deployTestUsdc(createWalletClient({ account: deployer, transport }), createPublicClient({ transport }))
    deps = buildWorkerDeps(
      ctx.config,
      { sql: ctx.database.sql, redis, log: silent },
      { chains: { base: { chainId: chain.chainId, usdc, confirmations: CONFIRMATIONS } } },
    )
    base = deps.clients.get('base') as ChainClients
    const mint = await base.walletClient.writeContract({
      account: deployer,
      address: usdc,
      abi: testUsdcAbi,
      functionName: 'mint',
      args: [deps.hotWallet('base').address, USDC(1_000)],
    })
    await base.publicClient.waitForTransactionReceipt({ hash: mint, pollingInterval: 20 })
    const anvil = createTestClient({ mode: 'anvil', transport })
    mine = async (blocks = CONFIRMATIONS) => anvil.mine({ blocks })
    tickCtx = { log: silent, deps, queues: new Map() }
  })
  afterAll(async () => {
    redis?.disconnect()
    await ctx?.database.close()
    await chain?.stop()
  })

  async function requested(opts: { amount: bigint; deposit: bigint; currency?: 'USDC' | 'ETH' }) {
    const userId = randomUUID()
    const currency = opts.currency ?? 'USDC'
    await append(ctx.database.sql, {
      type: 'deposit_detected',
      payload: {
        userId,
        chain: 'base',
        txHash: `0x${randomBytes(32).toString('hex')}`,
        logIndex: 3,
        currency,
        amount: opts.deposit,
      },
      occurredAt: new Date(),
    })
    const { withdrawalId } = await ctx.database.sql.begin(async (tx) => {
      const r = await reserveWithdrawal(tx, { userId, currency, amount: opts.amount })
      await tx`update withdrawals set chain = 'base', destination = ${DEST} where id = ${r.withdrawalId}`
      return r
    })
    return { userId, withdrawalId }
  }
  const runTick = () => withdrawalSendTick.process({} as Job, tickCtx) as Promise<WithdrawalSendSummary>
  const usdcOf = (a: Address) =>
    base.publicClient.readContract({ address: usdc, abi: testUsdcAbi, functionName: 'balanceOf', args: [a] })
  const destTransfers = async () =>
    base.publicClient.getContractEvents({
      address: usdc,
      abi: testUsdcAbi,
      eventName: 'Transfer',
      args: { to: DEST },
      fromBlock: 0n,
    })

  it('is registered in the worker on the withdrawals queue', () => {
    const t = ticks.find((x) => x.name === 'withdrawals-send')
    expect(t).toBe(withdrawalSendTick)
    expect(t?.queue).toBe('withdrawals')
    expect(t?.everyMs).toBeGreaterThan(0)
  })

  it('reserve → tick → one transfer on chain → row sent with its hash → withdrawal_sent and gas_spent; re-runs add nothing', async () => {
    const { userId, withdrawalId } = await requested({ amount: USDC(25), deposit: USDC(100) })
    expect(await freeBalance(ctx.database.sql, userId, 'USDC')).toBe(USDC(75))

    // first run: signed, recorded, broadcast and mined, but not CONFIRMATIONS deep: still ACTIVE
    expect(await runTick()).toMatchObject({ sent: 0, pending: 1, errors: 0 })
    const [inFlight] = await ctx.database.sql<{ state: string; tx_hash: string | null }[]>`
      select state, tx_hash from withdrawals where id = ${withdrawalId}`
    expect(inFlight?.state).toBe('requested')
    const [out] = await ctx.database.sql<{ id: string; tx_hash: string; state: string; from_address: string }[]>`
      select id, tx_hash, state, from_address from outbound_txs where purpose = 'withdrawal' and ref_id = ${withdrawalId}`
    expect(out?.state).toBe('broadcast')
    expect(out?.from_address).toBe(deps.hotWallet('base').address)
    expect(inFlight?.tx_hash).toBe(out?.tx_hash)
    expect(await freeBalance(ctx.database.sql, userId, 'USDC')).toBe(USDC(75))

    await mine()
    expect(await runTick()).toMatchObject({ sent: 1, failed: 0, errors: 0 })
    const [w] = await ctx.database.sql<{ state: string; tx_hash: string; network_fee: string; sent_at: Date }[]>`
      select state, tx_hash, network_fee, sent_at from withdrawals where id = ${withdrawalId}`
    expect(w?.state).toBe('sent')
    expect(w?.tx_hash).toBe(out?.tx_hash)
    const [receiptRow] = await ctx.database.sql<{ state: string; gas_used: string; effective_gas_price: string }[]>`
      select state, gas_used, effective_gas_price from outbound_txs where id = ${out?.id as string}`
    expect(receiptRow?.state).toBe('confirmed')
    const fee = BigInt(receiptRow?.gas_used ?? 0) * BigInt(receiptRow?.effective_gas_price ?? 0)
    expect(BigInt(w?.network_fee ?? 0)).toBe(fee)

    const events = await ctx.database.sql<{ type: string; idempotency_key: string; payload: { amount: string } }[]>`
      select type, idempotency_key, payload from ledger_events where idempotency_key like ${`tx:base:${w?.tx_hash}:%`}
      order by idempotency_key`
    expect(events.map((e) => [e.type, e.idempotency_key])).toEqual([
      ['withdrawal_sent', ownTxKey({ chain: 'base', txHash: w?.tx_hash as string, slot: 0 })],
      ['gas_spent', ownTxKey({ chain: 'base', txHash: w?.tx_hash as string, slot: 1 })],
    ])
    expect(BigInt(events[1]?.payload.amount ?? 0)).toBe(fee)
    expect(await balanceOf(ctx.database.sql, userTransit(userId), 'USDC')).toBe(USDC(75))

    // re-runs: nothing sent, nothing journaled
    await mine()
    expect(await runTick()).toMatchObject({ sent: 0, failed: 0, pending: 0, errors: 0 })
    expect(await runTick()).toMatchObject({ sent: 0, failed: 0, pending: 0, errors: 0 })
    expect(await destTransfers()).toHaveLength(1)
    expect(await usdcOf(DEST)).toBe(USDC(25))
    const [{ n } = { n: 0 }] = await ctx.database.sql<{ n: number }[]>`
      select count(*)::int as n from ledger_events where user_id = ${userId}`
    expect(n).toBe(3)
    const [{ rows } = { rows: 0 }] = await ctx.database.sql<{ rows: number }[]>`
      select count(*)::int as rows from outbound_txs where ref_id = ${withdrawalId}`
    expect(rows).toBe(1)
  })

  it('a row whose transaction was signed before a crash is sent with those very bytes, not a new transaction', async () => {
    const { withdrawalId } = await requested({ currency: 'ETH', amount: parseEther('0.01'), deposit: parseEther('1') })
    const before = await base.publicClient.getBalance({ address: DEST })
    // the crash: the outbox committed the signed transaction, the process died before broadcasting it
    let signedHash: string | undefined
    const crashing = withdrawalSendDeps(deps, silent, {
      afterSigned: (r) => {
        signedHash = r.txHash
        throw new Error('killed after signing')
      },
    })
    expect(await sendWithdrawals(crashing)).toMatchObject({ errors: 1, sent: 0 })
    expect(signedHash).toMatch(/^0x[0-9a-f]{64}$/)
    await expect(base.publicClient.getTransaction({ hash: signedHash as `0x${string}` })).rejects.toThrow()

    // the restarted tick re-broadcasts the stored bytes
    await runTick()
    await mine()
    expect(await runTick()).toMatchObject({ sent: 1 })
    const [w] = await ctx.database.sql<{ state: string; tx_hash: string }[]>`
      select state, tx_hash from withdrawals where id = ${withdrawalId}`
    expect(w).toEqual({ state: 'sent', tx_hash: signedHash })
    expect((await base.publicClient.getBalance({ address: DEST })) - before).toBe(parseEther('0.01'))
  })
})
