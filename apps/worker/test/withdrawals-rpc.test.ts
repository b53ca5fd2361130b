/**
 * The withdrawal tick against RPC providers that disagree, stall or fail (docs/hostile-world.md
 * "Never pay twice", "Fair queues"), through the hostile RPC proxy in front of a real anvil: a
 * backend that has not indexed a mined transaction never makes a withdrawal "failed" (it is held,
 * its reserve kept, until an operator rechecks), two backends answering from two heights never
 * lose or double a payment, and a chain whose RPC hangs never delays another chain's withdrawals.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { append, freeBalance, reserveWithdrawal } from '@wh/ledger'
import { heldEvidence, listHeld, recheckHeld } from '@wh/ops'
import { integrationContext, type RpcProxy, type RunningChain, startChain, startRpcProxy } from '@wh/testkit'
import { sendWithdrawals, withdrawalSendDeps } from '@wh/withdrawals'
import { Redis } from 'ioredis'
import { type Address, getAddress, parseEther } from 'viem'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { buildWorkerDeps } from '../src/deps'
import type { WorkerDeps } from '../src/ticks'

const silent = { info() {}, warn() {} }

describe('withdrawals when RPC providers disagree, stall or fail', () => {
  let chainA: RunningChain
  let chainB: RunningChain
  let proxy: RpcProxy
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  let redis: Redis
  let deps: WorkerDeps
  const alerts: string[] = []

  beforeAll(async () => {
    // ethereum reaches its node through the proxy; base has a node of its own, reached directly
    chainA = await startChain({ chainId: 1 })
    chainB = await startChain({ chainId: 8453 })
    proxy = await startRpcProxy({ upstream: chainA.rpcUrl })
    ctx = await integrationContext({ RPC_URL_ETHEREUM: proxy.url, RPC_URL_BASE: chainB.rpcUrl })
    redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 })
    const built = buildWorkerDeps(
      ctx.config,
      { sql: ctx.database.sql, redis, log: silent },
      {
        chains: { ethereum: { confirmations: 0 }, base: { confirmations: 0 } },
        // a provider that hangs is given up on in a second here (30 s in production)
        clientOptions: { timeoutMs: 1_000 },
      },
    )
    deps = {
      ...built,
      alerter: { channel: 'log', alert: async (text) => void alerts.push(text) },
      outboxTuning: { contradictionHold: { readings: 3, afterMs: 0 } },
    }
  })
  afterAll(async () => {
    redis?.disconnect()
    await ctx?.database.close()
    await proxy?.stop()
    await chainA?.stop()
    await chainB?.stop()
  })

  const tick = () => sendWithdrawals(withdrawalSendDeps(deps, silent))

  async function requested(chain: 'ethereum' | 'base', amount: bigint) {
    const userId = randomUUID()
    const destination = getAddress(`0x${randomBytes(20).toString('hex')}`)
    await append(ctx.database.sql, {
      type: 'deposit_detected',
      payload: {
        userId,
        chain,
        txHash: `0x${randomBytes(32).toString('hex')}`,
        logIndex: 7,
        currency: 'ETH',
        amount: parseEther('1'),
      },
      occurredAt: new Date(),
    })
    const { withdrawalId } = await ctx.database.sql.begin(async (tx) => {
      const r = await reserveWithdrawal(tx, { userId, currency: 'ETH', amount })
      await tx`update withdrawals set chain = ${chain}, destination = ${destination} where id = ${r.withdrawalId}`
      return r
    })
    return { userId, withdrawalId, destination }
  }
  const row = async (id: string) =>
    (
      await ctx.database.sql<
        { state: string; held_at: Date | null; last_error_code: string | null; tx_hash: string | null }[]
      >`
        select state, held_at, last_error_code, tx_hash from withdrawals where id = ${id}`
    )[0]
  const balanceAt = (address: Address) => deps.clients.get('ethereum')?.publicClient.getBalance({ address })

  it('a backend that never serves the mined transaction: never "failed", held with its reserve, sent once after an operator recheck', async () => {
    await proxy.reset()
    // the provider's backends have not indexed anything recent: no receipt, no transaction by hash,
    // while the sender's nonce (and the head) are current
    await proxy.script([
      { method: 'eth_getTransactionReceipt', action: { nullRecent: { blocks: 1_000 } } },
      { method: 'eth_getTransactionByHash', action: { nullRecent: { blocks: 1_000 } } },
    ])
    const { userId, withdrawalId, destination } = await requested('ethereum', parseEther('0.1'))
    for (let i = 0; i < 2; i++) {
      expect(await tick()).toMatchObject({ sent: 0, failed: 0, held: 0 })
      expect((await row(withdrawalId))?.state).toBe('requested')
    }
    expect(await tick()).toMatchObject({ sent: 0, failed: 0, held: 1 })
    const held = await row(withdrawalId)
    expect(held).toMatchObject({ state: 'requested', last_error_code: 'HELD' })
    expect(held?.held_at).toBeInstanceOf(Date)
    // the money went out exactly once, and the reserve still counts it
    expect(await balanceAt(destination)).toBe(parseEther('0.1'))
    expect(await freeBalance(ctx.database.sql, userId, 'ETH')).toBe(parseEther('0.9'))
    expect(alerts.filter((a) => a.startsWith('outbound transaction held'))).toHaveLength(1)
    // a held withdrawal leaves the queue: further ticks neither send nor fail it
    expect(await tick()).toMatchObject({ sent: 0, failed: 0, held: 0, pending: 0 })

    const [h] = (await listHeld(ctx.database.sql)).filter((x) => x.ref_id === withdrawalId)
    expect(h?.purpose).toBe('withdrawal')
    // an operator misled by the same provider would fail it, and the reserve would pay a second time:
    // the chain is read again first, and the block where the nonce was used shows our own version
    await expect(
      heldEvidence({ sql: ctx.database.sql, clients: deps.clients }, h?.id as string, 'failed'),
    ).rejects.toMatchObject({ code: 'OUTBOUND_MINED' })
    // the operator checks a second provider (here: the node itself), finds the receipt, rechecks
    await proxy.reset()
    await recheckHeld(ctx.database.sql, h?.id as string, {
      reason: 'receipt found on the node behind the provider',
      actor: 'alice',
    })
    expect(await tick()).toMatchObject({ sent: 1 })
    expect((await row(withdrawalId))?.state).toBe('sent')
    expect(await balanceAt(destination)).toBe(parseEther('0.1'))
    expect(await freeBalance(ctx.database.sql, userId, 'ETH')).toBe(parseEther('0.9'))
    const events = await ctx.database.sql<{ type: string }[]>`
      select type from ledger_events where user_id = ${userId} and type = 'withdrawal_sent'`
    expect(events).toHaveLength(1)
  })

  it('two backends at two heights behind one balancer: the withdrawal is sent once, never failed', async () => {
    await proxy.reset()
    await proxy.script([{ method: '*', action: { flipFlop: { blocks: 3 } } }])
    const { withdrawalId, destination } = await requested('ethereum', parseEther('0.05'))
    const seen = new Set<string>()
    for (let i = 0; i < 12 && (await row(withdrawalId))?.state === 'requested'; i++) {
      await tick().catch(() => undefined)
      seen.add((await row(withdrawalId))?.state ?? '')
      // blocks keep coming, as on a live chain
      await fetch(chainA.rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'evm_mine', params: [] }),
      })
    }
    expect(seen.has('failed')).toBe(false)
    expect((await row(withdrawalId))?.state).toBe('sent')
    expect(await balanceAt(destination)).toBe(parseEther('0.05'))
  })

  it("an unknown error while the chain answers its probe is the row's: attempts with backoff, then failed with a reason and its reserve released", async () => {
    await proxy.reset()
    // the chain answers its id and height (the probe); only this row's preparation meets an error nobody knows
    await proxy.script([
      { method: 'eth_getCode', action: { rpcError: { code: -32603, message: 'backend glitch 7f3a' } } },
    ])
    const w = await requested('ethereum', parseEther('0.01'))
    const free = () => freeBalance(ctx.database.sql, w.userId, 'ETH')
    const reserved = await free()
    expect(reserved).toBe(parseEther('0.99'))
    const info = async () =>
      (
        await ctx.database.sql<{ state: string; code: string | null; errors: number; reason: string | null }[]>`
          select state, last_error_code as code, send_errors as errors, failure_reason as reason
          from withdrawals where id = ${w.withdrawalId}`
      )[0]
    for (let attempt = 1; attempt < 5; attempt++) {
      await ctx.database.sql`update withdrawals set next_attempt_at = now() where id = ${w.withdrawalId}`
      expect(await tick()).toMatchObject({ sent: 0, failed: 0, errors: 1 })
      // an attempt on the row, not a chain marked down: its backoff, its count, its reserve kept
      expect(await info()).toMatchObject({ state: 'requested', code: 'SEND_ERROR', errors: attempt })
      expect(await free()).toBe(reserved)
    }
    await ctx.database.sql`update withdrawals set next_attempt_at = now() where id = ${w.withdrawalId}`
    expect(await tick()).toMatchObject({ sent: 0, failed: 1 })
    const ended = await info()
    // the reason a user reads, and the code that names it
    expect(ended).toMatchObject({ state: 'failed', code: 'SEND_ERROR' })
    expect(ended?.reason).toMatch(/nothing was sent and the amount is available again/)
    expect(await free()).toBe(parseEther('1'))
    expect(await balanceAt(w.destination)).toBe(0n)
  }, 60_000)

  it('a provider that hangs on one chain delays no withdrawal of another chain, and one that rate-limits pushes its rows back', async () => {
    await proxy.reset()
    await proxy.script([{ method: '*', action: { hang: true } }])
    const stalled = await requested('ethereum', parseEther('0.01'))
    const other = await requested('base', parseEther('0.01'))
    const started = performance.now()
    const summary = await tick()
    expect(performance.now() - started).toBeLessThan(15_000)
    expect(summary.sent).toBe(1)
    expect((await row(other.withdrawalId))?.state).toBe('sent')
    const back = await row(stalled.withdrawalId)
    expect(back).toMatchObject({ state: 'requested', last_error_code: 'RPC_UNAVAILABLE', tx_hash: null })

    await proxy.reset()
    await proxy.script([{ method: '*', action: { httpError: { status: 429 } } }])
    await ctx.database.sql`update withdrawals set next_attempt_at = now() where id = ${stalled.withdrawalId}`
    expect(await tick()).toMatchObject({ sent: 0, errors: 1 })
    const [again] = await ctx.database.sql<{ attempts: number; due: boolean }[]>`
      select attempts, next_attempt_at <= now() as due from withdrawals where id = ${stalled.withdrawalId}`
    expect(again).toEqual({ attempts: 2, due: false })

    // the provider recovers and the backoff is over: sent
    await proxy.reset()
    await ctx.database.sql`update withdrawals set next_attempt_at = now() where id = ${stalled.withdrawalId}`
    expect(await tick()).toMatchObject({ sent: 1 })
    expect(await balanceAt(stalled.destination)).toBe(parseEther('0.01'))
  }, 60_000)
})
