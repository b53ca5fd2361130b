import { randomBytes, randomUUID } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { ManualClock } from '@wh/core'
import { append, balanceOf, freeBalance, ownTxKey, reserveWithdrawal, userExternal, userTransit } from '@wh/ledger'
import { integrationContext, type RunningChain, startChain, TEST_PRIVATE_KEYS } from '@wh/testkit'
import {
  buildChainClients,
  buildChainRegistry,
  createAlerter,
  DepositKeyring,
  deployTestUsdc,
  testUsdcAbi,
} from '@wh/wallet'
import {
  type OutboundRecord,
  type OutboxPort,
  sendWithdrawal,
  sendWithdrawals,
  type WithdrawalSendDeps,
} from '@wh/withdrawals'
import { Redis } from 'ioredis'
import { createPublicClient, createWalletClient, http } from 'viem'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'

const silent = { info() {}, warn() {} }
const DEST = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'
const alertPrefix = `test-${randomUUID()}`

/** A local stand-in for the Telegram Bot API on 127.0.0.1. */
async function captureServer() {
  const requests: Array<{ url: string; body: { chat_id: string; text: string } }> = []
  const server: Server = createServer((req, res) => {
    let raw = ''
    req.on('data', (c) => {
      raw += c
    })
    req.on('end', () => {
      requests.push({ url: req.url ?? '', body: JSON.parse(raw) })
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}')
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise<void>((r) => server.close(() => r())),
  }
}

describe('withdrawals tick (spec 4.2, 3.2, 6.1) on a real chain', () => {
  let chain: RunningChain
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  let redis: Redis
  let capture: Awaited<ReturnType<typeof captureServer>>
  let deps: WithdrawalSendDeps
  let clock: ManualClock
  let usdc: `0x${string}`
  let outbox: OutboxPort
  let clients: ReturnType<typeof buildChainClients>
  /** transactions the outbox stand-in actually broadcast, per (purpose, refId, step) */
  const broadcasts = new Map<string, OutboundRecord>()
  /** refIds sent with a fixed gas limit, skipping the estimate, so a bad transfer reverts on chain */
  const noEstimate = new Set<string>()

  beforeAll(async () => {
    chain = await startChain({ chainId: 8453 })
    ctx = await integrationContext({
      // base's node; the other chains' RPCs answer nothing (testEnv): a test of one chain
      RPC_URL_BASE: chain.rpcUrl,
    })
    redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 })
    capture = await captureServer()
    const keyring = DepositKeyring.fromMnemonic(ctx.config.keys.masterMnemonic)
    const deployer = keyring.signer(0).account
    // the hot wallet: MASTER_PRIVATE_KEY's account (the test env uses the mnemonic's index 1)
    const hot = keyring.signer(1).account
    expect(ctx.config.keys.masterPrivateKey).toBe(TEST_PRIVATE_KEYS[1])
    const transport = http(chain.rpcUrl)
    usdc = await deployTestUsdc(createWalletClient({ account: deployer, transport }), createPublicClient({ transport }))
    const registry = buildChainRegistry(ctx.config, { base: { chainId: chain.chainId, usdc, confirmations: 0 } })
    clients = buildChainClients(registry)
    const baseClients = clients.get('base')
    if (!baseClients) throw new Error('no base clients')
    const mint = await baseClients.walletClient.writeContract({
      account: deployer,
      address: usdc,
      abi: testUsdcAbi,
      functionName: 'mint',
      args: [hot.address, 1_000_000_000n],
    })
    await baseClients.publicClient.waitForTransactionReceipt({ hash: mint })
    // A stand-in for packages/wallet/src/outbox.ts (not in the tree yet): it broadcasts a real
    // transfer on the local node once per (purpose, refId, step) and confirms by receipt. The
    // outbox's own crash safety is its tests' business; this file tests the withdrawal tick.
    outbox = {
      registry,
      async sendOnce(t) {
        const key = `${t.purpose}/${t.refId}/${t.step ?? 0}`
        const earlier = broadcasts.get(key)
        if (earlier) return earlier
        const txHash =
          t.token === 'ETH'
            ? await baseClients.walletClient.sendTransaction({ account: t.signer, to: t.to, value: t.amountBaseUnits })
            : await baseClients.walletClient.writeContract({
                account: t.signer,
                address: usdc,
                abi: testUsdcAbi,
                functionName: 'transfer',
                args: [t.to, t.amountBaseUnits],
                ...(noEstimate.has(t.refId) ? { gas: 100_000n } : {}),
              })
        const record: OutboundRecord = { id: key, txHash, nonce: 0, state: 'broadcast' }
        broadcasts.set(key, record)
        return record
      },
      async confirmOutbound(id) {
        const record = broadcasts.get(id)
        if (!record) throw new Error(`unknown outbound ${id}`)
        const r = await baseClients.publicClient.waitForTransactionReceipt({ hash: record.txHash, pollingInterval: 50 })
        return {
          ...record,
          state: r.status === 'success' ? 'confirmed' : 'failed',
          gasUsed: r.gasUsed,
          effectiveGasPrice: r.effectiveGasPrice,
          blockNumber: r.blockNumber,
        }
      },
      async hasTransaction(id) {
        return broadcasts.has(`withdrawal/${id}/0`)
      },
      async balanceOf(_chain, token, address) {
        if (token === 'ETH') return baseClients.publicClient.getBalance({ address })
        return baseClients.publicClient.readContract({
          address: usdc,
          abi: testUsdcAbi,
          functionName: 'balanceOf',
          args: [address],
        })
      },
    }
    clock = new ManualClock(Date.now())
    deps = {
      sql: ctx.database.sql,
      outbox,
      hotWallet: () => hot,
      platformAddresses: new Set([hot.address.toLowerCase()]),
      alerter: createAlerter({ botToken: '42:test-token', chatId: '-1001', log: silent, apiBaseUrl: capture.baseUrl }),
      stuckMinutes: ctx.config.withdrawal.stuckMinutes,
      claimAlert: async (key, ttlMs) => (await redis.set(`${alertPrefix}:${key}`, '1', 'PX', ttlMs, 'NX')) === 'OK',
      clock,
      log: silent,
    }
  })
  afterAll(async () => {
    await capture?.close()
    redis?.disconnect()
    await ctx?.database.close()
    await chain?.stop()
  })

  async function requested(opts: { amount: bigint; deposit: bigint; currency?: string }) {
    const userId = randomUUID()
    const currency = opts.currency ?? 'USDC'
    await append(ctx.database.sql, {
      type: 'deposit_detected',
      payload: {
        userId,
        chain: 'base',
        txHash: `0x${randomBytes(32).toString('hex')}`,
        logIndex: 1,
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

  const usdcBalance = (address: `0x${string}`) =>
    clients.get('base')?.publicClient.readContract({
      address: usdc,
      abi: testUsdcAbi,
      functionName: 'balanceOf',
      args: [address],
    })

  it('sends a requested withdrawal once, confirms it, journals it and marks it sent; a re-run changes nothing', async () => {
    const { userId, withdrawalId } = await requested({ amount: 25_000_000n, deposit: 100_000_000n })
    expect(await freeBalance(ctx.database.sql, userId, 'USDC')).toBe(75_000_000n)

    const first = await sendWithdrawals(deps)
    expect(first).toMatchObject({ sent: 1, failed: 0, errors: 0 })
    expect(await usdcBalance(DEST)).toBe(25_000_000n)

    const [w] = await ctx.database.sql<
      { state: string; tx_hash: string; network_fee: string; sent_at: Date | null }[]
    >`select state, tx_hash, network_fee, sent_at from withdrawals where id = ${withdrawalId}`
    expect(w?.state).toBe('sent')
    expect(w?.tx_hash).toMatch(/^0x[0-9a-f]{64}$/)
    expect(BigInt(w?.network_fee ?? '0')).toBeGreaterThan(0n)
    expect(w?.sent_at).toBeInstanceOf(Date)
    const txHash = w?.tx_hash as string

    const events = await ctx.database.sql<{ type: string; idempotency_key: string }[]>`
      select type, idempotency_key from ledger_events where user_id = ${userId} order by idempotency_key`
    expect(events.filter((e) => e.type !== 'deposit_detected')).toEqual([
      { type: 'withdrawal_sent', idempotency_key: ownTxKey({ chain: 'base', txHash, slot: 0 }) },
      { type: 'gas_spent', idempotency_key: ownTxKey({ chain: 'base', txHash, slot: 1 }) },
    ])
    // transit lost exactly the amount, the reserve is gone, the free balance is unchanged
    expect(await balanceOf(ctx.database.sql, userTransit(userId), 'USDC')).toBe(75_000_000n)
    expect(await balanceOf(ctx.database.sql, userExternal(userId), 'USDC')).toBe(-75_000_000n)
    expect(await freeBalance(ctx.database.sql, userId, 'USDC')).toBe(75_000_000n)

    const second = await sendWithdrawals(deps)
    expect(second).toMatchObject({ sent: 0, failed: 0, pending: 0, errors: 0 })
    expect(await usdcBalance(DEST)).toBe(25_000_000n)
    const [{ n } = { n: 0 }] = await ctx.database.sql<{ n: number }[]>`
      select count(*)::int as n from ledger_events where user_id = ${userId}`
    expect(n).toBe(3)
    expect([...broadcasts.keys()].filter((k) => k.includes(withdrawalId))).toHaveLength(1)
  })

  it('sends native ETH too', async () => {
    const { userId, withdrawalId } = await requested({
      currency: 'ETH',
      amount: 10_000_000_000_000_000n,
      deposit: 50_000_000_000_000_000n,
    })
    const before = await clients.get('base')?.publicClient.getBalance({ address: DEST })
    const r = await sendWithdrawals(deps)
    expect(r.sent).toBe(1)
    const after = await clients.get('base')?.publicClient.getBalance({ address: DEST })
    expect((after ?? 0n) - (before ?? 0n)).toBe(10_000_000_000_000_000n)
    const [w] = await ctx.database.sql<{ state: string }[]>`select state from withdrawals where id = ${withdrawalId}`
    expect(w?.state).toBe('sent')
    expect(await freeBalance(ctx.database.sql, userId, 'ETH')).toBe(40_000_000_000_000_000n)
  })

  it('a withdrawal the hot wallet cannot cover waits out its backoff, alerts the shortage once, and later that it is stuck', async () => {
    // more USDC than the hot wallet holds: the send fails before anything is signed
    const { withdrawalId } = await requested({ amount: 5_000_000_000n, deposit: 6_000_000_000n })
    const early = await sendWithdrawals(deps)
    expect(early).toMatchObject({ sent: 0, failed: 0, errors: 1, stuckAlerts: 0 })
    const row = async () =>
      (
        await ctx.database.sql<{ state: string; attempts: number; last_error_code: string; due: boolean }[]>`
          select state, attempts, last_error_code, next_attempt_at <= now() as due from withdrawals
          where id = ${withdrawalId}`
      )[0]
    expect(await row()).toEqual({ state: 'requested', attempts: 1, last_error_code: 'HOT_WALLET_SHORT', due: false })
    expect(capture.requests).toHaveLength(1)
    expect(capture.requests[0]?.body.text).toContain('short of funds')

    // not due yet: the next run passes it by
    expect(await sendWithdrawals(deps)).toMatchObject({ errors: 0 })

    // due again (its backoff over) and stuck by then: tried again, the shortage not announced twice
    await ctx.database.sql`update withdrawals set next_attempt_at = now() where id = ${withdrawalId}`
    clock.advance((ctx.config.withdrawal.stuckMinutes + 1) * 60_000)
    const late = await sendWithdrawals(deps)
    expect(late).toMatchObject({ sent: 0, errors: 1, stuckAlerts: 1 })
    expect((await row())?.attempts).toBe(2)
    expect(capture.requests).toHaveLength(2)
    expect(capture.requests[1]?.url).toBe('/bot42:test-token/sendMessage')
    expect(capture.requests[1]?.body.chat_id).toBe('-1001')
    expect(capture.requests[1]?.body.text).toContain('withdrawal stuck')
    expect(capture.requests[1]?.body.text).toContain(withdrawalId)
    expect(capture.requests[1]?.body.text).not.toContain('test-token')

    // once per period, not every tick
    const again = await sendWithdrawals(deps)
    expect(again.stuckAlerts).toBe(0)
    expect(capture.requests).toHaveLength(2)
    expect((await row())?.state).toBe('requested')
  })

  it('a transaction that fails on chain moves the withdrawal to failed and releases the reserve', async () => {
    const { userId, withdrawalId } = await requested({ amount: 2_000_000_000n, deposit: 3_000_000_000n })
    noEstimate.add(withdrawalId)
    expect(await freeBalance(ctx.database.sql, userId, 'USDC')).toBe(1_000_000_000n)
    const before = capture.requests.length
    const r = await sendWithdrawals(deps)
    expect(r.failed).toBe(1)
    const [w] = await ctx.database.sql<{ state: string; failure_reason: string; tx_hash: string }[]>`
      select state, failure_reason, tx_hash from withdrawals where id = ${withdrawalId}`
    expect(w?.state).toBe('failed')
    expect(w?.failure_reason).toMatch(/failed on chain/)
    // nothing left: transit untouched, the reserve released
    expect(await freeBalance(ctx.database.sql, userId, 'USDC')).toBe(3_000_000_000n)
    const events = await ctx.database.sql<{ type: string; idempotency_key: string }[]>`
      select type, idempotency_key from ledger_events where user_id = ${userId} and type <> 'deposit_detected'`
    expect(events).toEqual([
      { type: 'gas_spent', idempotency_key: ownTxKey({ chain: 'base', txHash: w?.tx_hash as string, slot: 0 }) },
    ])
    expect(capture.requests.length).toBe(before + 1)
    expect(capture.requests.at(-1)?.body.text).toContain('failed on chain')
    expect((await sendWithdrawals(deps)).failed).toBe(0)
  })

  it('within a turn, a user none of whose withdrawals failed today goes before one whose did', async () => {
    // user A: a withdrawal that fails on chain (more than the hot wallet holds, sent without its
    // estimate), then an older-looking one waiting
    const a1 = await requested({ amount: 2_000_000_000n, deposit: 3_000_000_000n })
    noEstimate.add(a1.withdrawalId)
    // other tests' rows out of the way, so the batch of one is A's or B's
    await ctx.database.sql`update withdrawals set next_attempt_at = now() + interval '1 hour'
      where state = 'requested' and id <> ${a1.withdrawalId}`
    expect((await sendWithdrawals(deps)).failed).toBe(1)
    const a2 = await ctx.database.sql.begin(async (tx) => {
      const w = await reserveWithdrawal(tx, { userId: a1.userId, currency: 'USDC', amount: 1_000_000n })
      await tx`update withdrawals set chain = 'base', destination = ${DEST}, created_at = now() - interval '1 minute',
        next_attempt_at = now() - interval '1 minute' where id = ${w.withdrawalId}`
      return w
    })
    const b = await requested({ amount: 1_000_000n, deposit: 50_000_000n })
    // one row per run: B's, though A's has waited longer
    const r = await sendWithdrawals(deps, { batchSize: 1, maxRounds: 1 })
    expect(r.sent).toBe(1)
    const states = await ctx.database.sql<{ id: string; state: string }[]>`
      select id, state from withdrawals where id in (${a2.withdrawalId}, ${b.withdrawalId})`
    expect(Object.fromEntries(states.map((w) => [w.id, w.state]))).toEqual({
      [a2.withdrawalId]: 'requested',
      [b.withdrawalId]: 'sent',
    })
    // and A's is next
    expect((await sendWithdrawals(deps, { batchSize: 1, maxRounds: 1 })).sent).toBe(1)
  })
  it('one withdrawal by id (a job of its own): sent once; a second call finds nothing to do', async () => {
    const { withdrawalId } = await requested({ amount: 3_000_000n, deposit: 10_000_000n })
    const before = (await usdcBalance(DEST)) ?? 0n
    expect(await sendWithdrawal(deps, withdrawalId)).toEqual({ outcome: 'sent' })
    expect(await sendWithdrawal(deps, withdrawalId)).toEqual({ outcome: 'skipped' })
    expect(((await usdcBalance(DEST)) ?? 0n) - before).toBe(3_000_000n)
    expect([...broadcasts.keys()].filter((k) => k.includes(withdrawalId))).toHaveLength(1)
    const [w] = await ctx.database.sql<{ state: string }[]>`select state from withdrawals where id = ${withdrawalId}`
    expect(w?.state).toBe('sent')
  })

  it('one withdrawal by id to an address of the platform fails before anything is signed, its reserve released', async () => {
    const { userId, withdrawalId } = await requested({ amount: 4_000_000n, deposit: 10_000_000n })
    const own = [...deps.platformAddresses][0] as string
    await ctx.database.sql`update withdrawals set destination = ${own} where id = ${withdrawalId}`
    expect(await sendWithdrawal(deps, withdrawalId)).toEqual({ outcome: 'failed' })
    const [w] = await ctx.database.sql<{ state: string; last_error_code: string }[]>`
      select state, last_error_code from withdrawals where id = ${withdrawalId}`
    expect(w).toEqual({ state: 'failed', last_error_code: 'PLATFORM_ADDRESS' })
    expect([...broadcasts.keys()].filter((k) => k.includes(withdrawalId))).toHaveLength(0)
    expect(await freeBalance(ctx.database.sql, userId, 'USDC')).toBe(10_000_000n)
  })

  it('one withdrawal by id on a chain whose RPC has not answered its chain id is left as it is, the chain down', async () => {
    const { withdrawalId } = await requested({ amount: 5_000_000n, deposit: 10_000_000n })
    const unverified: WithdrawalSendDeps = { ...deps, chainReady: async () => false }
    expect(await sendWithdrawal(unverified, withdrawalId)).toMatchObject({
      outcome: 'errors',
      retry: { code: 'RPC_UNAVAILABLE', chainDown: true },
    })
    const [w] = await ctx.database.sql<{ state: string; attempts: number }[]>`
      select state, attempts from withdrawals where id = ${withdrawalId}`
    expect(w).toEqual({ state: 'requested', attempts: 0 })
    expect([...broadcasts.keys()].filter((k) => k.includes(withdrawalId))).toHaveLength(0)
  })
})
