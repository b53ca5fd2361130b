/**
 * The funding tick against the Derive simulator over real HTTP, a real Postgres and Redis: a
 * reserved funding becomes a signed, stored, sent and settled deposit (create_subaccount the first
 * time), recorded once as subaccount_funded; failures release the reservation; a worker killed
 * mid-funding and restarted funds exactly once. On Derive v3 the movements are transfer_spot with the
 * platform's funding subaccount, and a creation pays the exchange's fee on top of the amount, booked in its
 * subaccount_funded (docs/exchange-v3.md "Movements on v3").
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import type { RunningSimulator } from '@wh/derive-simulator'
import { type DeriveClient, fromE18, toE18 } from '@wh/exchange'
import {
  balanceOf,
  EXCHANGE_CHAIN,
  freeBalance,
  PLATFORM_EXPENSE_OVERHEAD,
  platformHot,
  reserveFunding,
  userSub,
  userTransit,
} from '@wh/ledger'
import {
  createdSubaccountId,
  EXCHANGE_CYCLE_LOCK,
  type FundSummary,
  fundTransferById,
  LANDED_GRACE_SEC,
  reconcileSubaccount,
  runFunding,
  type SubaccountDbRow,
  TRANSFER_SIGNATURE_TTL_SEC,
  toExchangeSubaccount,
} from '@wh/subaccounts'
import type { integrationContext } from '@wh/testkit'
import type { Job } from 'bullmq'
import type { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { fundTick, reconcileSources } from '../src/jobs/exchange/ticks'
import { ticks } from '../src/jobs/index'
import type { TickContext, WorkerDeps } from '../src/ticks'
import { creditDeposit, type ExchangeStack, silent, startExchangeStack } from './fixtures/exchange-stack'

const USDC = (n: number) => BigInt(n) * 1_000_000n
const ETH = (n: number) => BigInt(n) * 10n ** 18n

describe('funding tick against the simulator', () => {
  const REDIS_PREFIX = `fund-test-${randomUUID()}:`
  let sim: RunningSimulator
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  let redis: Redis
  let deps: WorkerDeps
  let exchange: DeriveClient
  let tickCtx: TickContext
  let alerts: ExchangeStack['alerts']
  let stack: ExchangeStack

  beforeAll(async () => {
    // the wall clock: the crash test's child process signs with its own system clock
    stack = await startExchangeStack({
      sim: { clock: 'wall' },
      wallet: { USDC: '1000000', ETH: '1' },
      redisPrefix: REDIS_PREFIX,
    })
    ;({ sim, ctx, redis, deps } = stack)
    alerts = stack.alerts
    exchange = deps.exchange
    tickCtx = { log: silent, deps, queues: new Map() }
  })
  afterAll(async () => stack?.close())

  const sql = () => ctx.database.sql
  const runTick = () => fundTick.process({} as Job, tickCtx) as Promise<FundSummary>

  async function userWith(currency: 'USDC' | 'ETH', amount: bigint): Promise<string> {
    const userId = randomUUID()
    await creditDeposit(sql(), userId, amount, { currency })
    return userId
  }
  const transfer = async (id: string) =>
    (
      await sql()<
        { state: string; method: string | null; transaction_id: string | null; reason: string | null; nonce: string }[]
      >`select state, method, transaction_id, reason, nonce::text as nonce from subaccount_transfers where id = ${id}`
    )[0]
  const exchangeIdOf = async (subaccountRowId: string) => {
    const [s] = await sql()<{ exchange_id: string | null }[]>`
      select exchange_id::text as exchange_id from subaccounts where id = ${subaccountRowId}`
    return s?.exchange_id ?? null
  }
  const eventCount = async (userId?: string) => {
    const [r] = userId
      ? await sql()<{ n: number }[]>`select count(*)::int as n from ledger_events where user_id = ${userId}`
      : await sql()<{ n: number }[]>`select count(*)::int as n from ledger_events`
    return r?.n ?? 0
  }
  const exchangeUsdc = async (exchangeId: string) =>
    (await exchange.getSubaccount(Number(exchangeId))).collaterals.find((c) => c.asset_name === 'USDC')?.amount ?? '0'
  const depositsAt = async (exchangeId: string) =>
    (await exchange.getDepositHistory({ subaccount_id: Number(exchangeId) })).events

  it('is registered on the treasury queue', () => {
    const t = ticks.find((x) => x.name === 'exchange-fund')
    expect(t).toBe(fundTick)
    expect(t?.queue).toBe('treasury')
    expect(t?.everyMs).toBeGreaterThan(0)
  })

  it('first funding creates the subaccount, the second deposits into it; balances agree; re-runs add nothing', async () => {
    const userId = await userWith('USDC', USDC(1_000))
    const first = await reserveFunding(sql(), { userId, asset: 'ETH', currency: 'USDC', amount: USDC(600) })
    expect(await freeBalance(sql(), userId, 'USDC')).toBe(USDC(400))

    expect(await runTick()).toMatchObject({ funded: 1, failed: 0 })
    const row = await transfer(first.transferId)
    expect(row).toMatchObject({ state: 'funded', method: 'create_subaccount' })
    const exchangeId = await exchangeIdOf(first.subaccountRowId)
    expect(exchangeId).not.toBeNull()
    const sub = exchangeId as string
    expect(await balanceOf(sql(), userSub(userId, sub, 'USDC'), 'USDC')).toBe(USDC(600))
    expect(await balanceOf(sql(), userTransit(userId), 'USDC')).toBe(USDC(400))
    expect(await freeBalance(sql(), userId, 'USDC')).toBe(USDC(400))
    expect(await exchangeUsdc(sub)).toBe('600')
    const [evt] = await sql()<{ idempotency_key: string }[]>`
      select idempotency_key from ledger_events where user_id = ${userId} and type = 'subaccount_funded'`
    expect(evt?.idempotency_key).toBe(`subaccount_funded:${row?.transaction_id}`)

    const second = await reserveFunding(sql(), { userId, asset: 'ETH', currency: 'USDC', amount: USDC(150) })
    expect(second.subaccountRowId).toBe(first.subaccountRowId)
    expect(await runTick()).toMatchObject({ funded: 1 })
    expect(await transfer(second.transferId)).toMatchObject({ state: 'funded', method: 'deposit' })
    expect(await exchangeIdOf(first.subaccountRowId)).toBe(sub)
    expect(await balanceOf(sql(), userSub(userId, sub, 'USDC'), 'USDC')).toBe(USDC(750))
    expect(await freeBalance(sql(), userId, 'USDC')).toBe(USDC(250))
    expect(await exchangeUsdc(sub)).toBe('750')
    expect(await depositsAt(sub)).toHaveLength(2)

    const events = await eventCount()
    const walletUsdc = stack.platform.balance('USDC')
    expect(await runTick()).toMatchObject({ funded: 0, failed: 0, pending: 0 })
    expect(await runTick()).toMatchObject({ funded: 0, failed: 0, pending: 0 })
    expect(await eventCount()).toBe(events)
    expect(stack.platform.balance('USDC')).toBe(walletUsdc)
    expect(await depositsAt(sub)).toHaveLength(2)
  })

  it('one row funded by its id (a job per row): only that row moves; a settled row is not run again', async () => {
    const a = await userWith('USDC', USDC(500))
    const b = await userWith('USDC', USDC(500))
    const first = await reserveFunding(sql(), { userId: a, asset: 'ETH', currency: 'USDC', amount: USDC(300) })
    const other = await reserveFunding(sql(), { userId: b, asset: 'ETH', currency: 'USDC', amount: USDC(200) })
    const one = () => fundTransferById({ ...deps, log: silent }, first.transferId)

    expect(await one()).toBe('funded')
    expect(await transfer(first.transferId)).toMatchObject({ state: 'funded', method: 'create_subaccount' })
    const sub = (await exchangeIdOf(first.subaccountRowId)) as string
    expect(await balanceOf(sql(), userSub(a, sub, 'USDC'), 'USDC')).toBe(USDC(300))
    expect(await exchangeUsdc(sub)).toBe('300')
    expect(await transfer(other.transferId)).toMatchObject({ state: 'reserved', transaction_id: null })

    const events = await eventCount(a)
    expect(await one()).toBeNull()
    expect(await eventCount(a)).toBe(events)
    expect(await depositsAt(sub)).toHaveLength(1)
    // the other row goes with the next run
    expect(await runTick()).toMatchObject({ funded: 1, failed: 0 })
  })

  it('several users in one run: each gets its own subaccount, and rows of one subaccount wait for its creation', async () => {
    const users = await Promise.all([1, 2, 3].map(() => userWith('USDC', USDC(100))))
    const reserved = []
    for (const userId of users) {
      reserved.push(await reserveFunding(sql(), { userId, asset: 'BTC', currency: 'USDC', amount: USDC(30) }))
      reserved.push(await reserveFunding(sql(), { userId, asset: 'BTC', currency: 'USDC', amount: USDC(20) }))
    }
    expect(await runTick()).toMatchObject({ funded: 6, failed: 0 })
    const ids = new Set<string>()
    for (const [i, userId] of users.entries()) {
      const sub = (await exchangeIdOf(reserved[i * 2]?.subaccountRowId as string)) as string
      ids.add(sub)
      expect(await balanceOf(sql(), userSub(userId, sub, 'USDC'), 'USDC')).toBe(USDC(50))
      expect(await exchangeUsdc(sub)).toBe('50')
    }
    expect(ids.size).toBe(3)
  })

  it('a wallet short of funds: the row waits re-signed each run; it lands once the wallet is filled', async () => {
    const userId = await userWith('ETH', ETH(10))
    const r = await reserveFunding(sql(), { userId, asset: 'ETH', currency: 'ETH', amount: ETH(5) })
    expect(await runTick()).toMatchObject({ funded: 0, failed: 0, held: 1 })
    const waiting = await transfer(r.transferId)
    expect(waiting).toMatchObject({ state: 'reserved', nonce: null })
    expect(waiting?.reason).toMatch(/exchange wallet is short.*insufficient|funds/i)
    expect(await freeBalance(sql(), userId, 'ETH')).toBe(ETH(5)) // still reserved
    expect(await runTick()).toMatchObject({ held: 1 })
    // the bridge brings the money over: the next run signs afresh and it lands
    stack.platform.fund('ETH', '5')
    expect(await runTick()).toMatchObject({ funded: 1 })
    expect(await transfer(r.transferId)).toMatchObject({ state: 'funded' })
  })

  it('a wallet short for longer than the wait: the row fails, the reservation is released, an alert goes out', async () => {
    const userId = await userWith('ETH', ETH(10))
    alerts.length = 0
    const r = await reserveFunding(sql(), { userId, asset: 'ETH', currency: 'ETH', amount: ETH(5) })
    expect(await freeBalance(sql(), userId, 'ETH')).toBe(ETH(5))
    await sql()`update subaccount_transfers set created_at = now() - interval '31 minutes' where id = ${r.transferId}`
    expect(await runTick()).toMatchObject({ funded: 0, failed: 1 })
    const row = await transfer(r.transferId)
    expect(row?.state).toBe('failed')
    expect(row?.reason).toMatch(/insufficient|funds/i)
    expect(await freeBalance(sql(), userId, 'ETH')).toBe(ETH(10))
    expect(await eventCount(userId)).toBe(1) // the deposit only
    expect(alerts).toHaveLength(1)
    expect(alerts[0]?.text).toMatch(/funding failed/)
    expect(alerts[0]?.fields).toMatchObject({ transferId: r.transferId })
    expect(JSON.stringify(alerts)).not.toMatch(/signature|0x[0-9a-f]{130}/i)
    // a later run leaves it alone
    expect(await runTick()).toMatchObject({ failed: 0 })
  })

  it('a transport failure leaves the row for the next run; the retry sends the same stored action once', async () => {
    const userId = await userWith('USDC', USDC(100))
    const r = await reserveFunding(sql(), { userId, asset: 'ETH', currency: 'USDC', amount: USDC(10) })
    sim.control.failNext({ method: stack.platform.method('create_subaccount'), httpStatus: 503 })
    expect(await runTick()).toMatchObject({ funded: 0, failed: 0, pending: 1 })
    const stored = await transfer(r.transferId)
    expect(stored?.state).toBe('submitted')
    expect(await runTick()).toMatchObject({ funded: 1 })
    expect(await transfer(r.transferId)).toMatchObject({ state: 'funded', nonce: stored?.nonce })
  })

  it('a stopped subaccount is not funded: the row stays reserved with the reason, and goes once the stop clears', async () => {
    const userId = await userWith('USDC', USDC(100))
    const r = await reserveFunding(sql(), { userId, asset: 'ETH', currency: 'USDC', amount: USDC(40) })
    await sql()`update subaccounts set stopped_at = now(), stop_reason = 'reconciliation divergence'
      where id = ${r.subaccountRowId}`
    expect(await runTick()).toMatchObject({ funded: 0, held: 1 })
    expect(await transfer(r.transferId)).toMatchObject({
      state: 'reserved',
      reason: 'subaccount stopped: reconciliation divergence',
    })
    expect(await freeBalance(sql(), userId, 'USDC')).toBe(USDC(60))
    await sql()`update subaccounts set stopped_at = null, stop_reason = null where id = ${r.subaccountRowId}`
    expect(await runTick()).toMatchObject({ funded: 1 })
    expect(await transfer(r.transferId)).toMatchObject({ state: 'funded', reason: null })
  })

  async function killChildAt(killAt: 'stored' | 'sent'): Promise<string> {
    const child: ChildProcess = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        join(import.meta.dirname, 'fixtures/fund-child.ts'),
        JSON.stringify({ env: ctx.env, redisUrl: inject('redisUrl'), redisPrefix: REDIS_PREFIX, killAt }),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    )
    const transferId = await new Promise<string>((resolve, reject) => {
      let out = ''
      child.stdout?.on('data', (b: Buffer) => {
        out += b.toString()
        const m = /AT \S+ ([0-9a-f-]{36})/.exec(out)
        if (m?.[1]) resolve(m[1])
      })
      child.once('exit', (code) => reject(new Error(`child exited (${code}) before ${killAt}: ${out}`)))
    })
    child.kill('SIGKILL')
    await new Promise((r) => child.once('exit', r))
    return transferId
  }

  describe.each([
    ['sent', 'the exchange accepted the deposit, nothing about it stored'],
    ['stored', 'the signed params are committed, nothing sent'],
  ] as const)('SIGKILL at %s: %s', (killAt, _when) => {
    it('the restarted worker funds exactly once: one deposit at the exchange, one event', async () => {
      const userId = await userWith('USDC', USDC(500))
      const first = await reserveFunding(sql(), { userId, asset: 'ETH', currency: 'USDC', amount: USDC(100) })
      expect(await runTick()).toMatchObject({ funded: 1 }) // the subaccount exists: the crash hits a deposit
      const sub = (await exchangeIdOf(first.subaccountRowId)) as string
      const r = await reserveFunding(sql(), { userId, asset: 'ETH', currency: 'USDC', amount: USDC(250) })

      expect(await killChildAt(killAt)).toBe(r.transferId)
      const stored = await transfer(r.transferId)
      expect(stored).toMatchObject({ state: 'submitted', transaction_id: null })
      expect(await depositsAt(sub)).toHaveLength(killAt === 'sent' ? 2 : 1)
      expect(await freeBalance(sql(), userId, 'USDC')).toBe(USDC(150)) // still reserved

      // the dead process still holds the cycle lock until LOCK_TTL_MS: nothing runs beside it
      expect(await runTick()).toMatchObject({ locked: true })
      await redis.del(EXCHANGE_CYCLE_LOCK) // the TTL running out, without waiting two minutes

      expect(await runTick()).toMatchObject({ funded: 1, failed: 0 })
      const done = await transfer(r.transferId)
      expect(done).toMatchObject({ state: 'funded', nonce: stored?.nonce })
      const deposits = await depositsAt(sub)
      expect(deposits).toHaveLength(2)
      expect(done?.transaction_id).toBe(deposits[1]?.transaction_id)
      const funded = await sql()<{ n: number }[]>`
        select count(*)::int as n from ledger_events where user_id = ${userId} and type = 'subaccount_funded'`
      expect(funded[0]?.n).toBe(2)
      expect(await balanceOf(sql(), userSub(userId, sub, 'USDC'), 'USDC')).toBe(USDC(350))
      expect(await exchangeUsdc(sub)).toBe('350')
      expect(await freeBalance(sql(), userId, 'USDC')).toBe(USDC(150))
      expect(await runTick()).toMatchObject({ funded: 0, pending: 0 })
      expect(await depositsAt(sub)).toHaveLength(2)
    })
  })

  it('SIGKILL during the first funding (create_subaccount sent): the restart finds the new subaccount', async () => {
    const userId = await userWith('USDC', USDC(90))
    const r = await reserveFunding(sql(), { userId, asset: 'BTC', currency: 'USDC', amount: USDC(90) })
    const before = (await exchange.getSubaccounts()).subaccount_ids.length
    expect(await killChildAt('sent')).toBe(r.transferId)
    await redis.del(EXCHANGE_CYCLE_LOCK)
    expect((await exchange.getSubaccounts()).subaccount_ids).toHaveLength(before + 1)
    expect(await runTick()).toMatchObject({ funded: 1 })
    const sub = (await exchangeIdOf(r.subaccountRowId)) as string
    expect(sub).not.toBeNull()
    expect(await exchangeUsdc(sub)).toBe('90')
    expect(await balanceOf(sql(), userSub(userId, sub, 'USDC'), 'USDC')).toBe(USDC(90))
    expect((await exchange.getSubaccounts()).subaccount_ids).toHaveLength(before + 1)
  })

  it("the creation fee is the platform's: the subaccount holds the amount, the event books the fee, reconciliation agrees", async () => {
    const userId = await userWith('USDC', USDC(300))
    const r = await reserveFunding(sql(), { userId, asset: 'BTC', currency: 'USDC', amount: USDC(250) })
    const platformBefore = toE18(stack.platform.balance('USDC'))
    expect(await runTick()).toMatchObject({ funded: 1, failed: 0 })
    const row = await transfer(r.transferId)
    expect(row).toMatchObject({ state: 'funded', method: 'create_subaccount' })
    const sub = (await exchangeIdOf(r.subaccountRowId)) as string
    // the user's subaccount holds exactly the amount; the funding subaccount paid amount + fee (1 USD, the cap)
    expect(await exchangeUsdc(sub)).toBe('250')
    expect(platformBefore - toE18(stack.platform.balance('USDC'))).toBe(toE18('251'))
    expect(await balanceOf(sql(), userSub(userId, sub, 'USDC'), 'USDC')).toBe(USDC(250))
    expect(await freeBalance(sql(), userId, 'USDC')).toBe(USDC(50))
    const [funded] = await sql()<{ id: string; payload: Record<string, unknown> }[]>`
        select id, payload from ledger_events where user_id = ${userId} and type = 'subaccount_funded'`
    expect(funded?.payload).toMatchObject({ amount: '250000000', feeAmount: '1000000', feeExcess: '0' })
    const postings = await sql()<{ account: string; amount: string }[]>`
        select account, amount::text as amount from ledger_postings where event_id = ${funded?.id ?? ''} order by account`
    expect(postings).toEqual(
      [
        { account: PLATFORM_EXPENSE_OVERHEAD, amount: '1000000' },
        { account: platformHot(EXCHANGE_CHAIN), amount: '-1000000' },
        { account: userSub(userId, sub, 'USDC'), amount: '250000000' },
        { account: userTransit(userId), amount: '-250000000' },
      ].sort((a, b) => (a.account < b.account ? -1 : 1)),
    )
    // every event of the journal sums to zero per currency
    const unbalanced = await sql()`
        select p.event_id, p.currency from ledger_postings p group by 1, 2 having sum(p.amount) <> 0`
    expect(unbalanced).toEqual([])
    // reconciliation of that subaccount: nothing diverges
    const [subRow] = await sql()<SubaccountDbRow[]>`
        select id, user_id, asset, exchange_id::text as exchange_id, accrued_to_ms::text as accrued_to_ms, stopped_at
        from subaccounts where id = ${r.subaccountRowId}`
    const at = new Date(sim.control.nowMs())
    const opts = { mode: 'observe' as const, epsilon: '0', nowMs: at.getTime(), at }
    const rec = await reconcileSubaccount(
      deps,
      reconcileSources,
      toExchangeSubaccount(subRow as SubaccountDbRow),
      opts,
      silent,
    )
    expect(rec).toEqual({ outcome: 'clean', divergences: [] })
  })

  it("the exchange takes less than the cap: the rest stays in the subaccount and is booked there, at the platform's cost", async () => {
    const userId = await userWith('USDC', USDC(40))
    const r = await reserveFunding(sql(), { userId, asset: 'BTC', currency: 'USDC', amount: USDC(40) })
    const platformBefore = toE18(stack.platform.balance('USDC'))
    const charged = sim.engine.subaccountCreationFeeE18
    sim.engine.subaccountCreationFeeE18 = toE18('0.4')
    try {
      expect(await runTick()).toMatchObject({ funded: 1, failed: 0 })
    } finally {
      sim.engine.subaccountCreationFeeE18 = charged
    }
    const sub = (await exchangeIdOf(r.subaccountRowId)) as string
    expect(platformBefore - toE18(stack.platform.balance('USDC'))).toBe(toE18('41'))
    expect(await exchangeUsdc(sub)).toBe('40.6')
    expect(await balanceOf(sql(), userSub(userId, sub, 'USDC'), 'USDC')).toBe(40_600_000n)
    const [funded] = await sql()<{ payload: Record<string, unknown> }[]>`
        select payload from ledger_events where user_id = ${userId} and type = 'subaccount_funded'`
    expect(funded?.payload).toMatchObject({ amount: '40000000', feeAmount: '400000', feeExcess: '600000' })
  })

  it('a creation whose fee exceeds the cap fails in its batch; the reservation is released, nothing is credited short', async () => {
    const userId = await userWith('USDC', USDC(80))
    const r = await reserveFunding(sql(), { userId, asset: 'BTC', currency: 'USDC', amount: USDC(80) })
    const platformBefore = stack.platform.balance('USDC')
    const subaccountsBefore = (await exchange.getSubaccounts()).subaccount_ids
    alerts.length = 0
    const charged = sim.engine.subaccountCreationFeeE18
    sim.engine.subaccountCreationFeeE18 = toE18('2') // above the worker's cap (EXCHANGE_SUBACCOUNT_CREATION_FEE_CAP_USD 1)
    try {
      expect(await runTick()).toMatchObject({ funded: 0, failed: 1 })
    } finally {
      sim.engine.subaccountCreationFeeE18 = charged
    }
    const row = await transfer(r.transferId)
    expect(row).toMatchObject({ state: 'failed', method: 'create_subaccount' })
    expect(row?.reason).toMatch(/reverted/)
    expect(await exchangeIdOf(r.subaccountRowId)).toBeNull()
    expect(await freeBalance(sql(), userId, 'USDC')).toBe(USDC(80))
    expect(await eventCount(userId)).toBe(1) // the deposit only: no subaccount_funded
    expect((await exchange.getSubaccounts()).subaccount_ids).toEqual(subaccountsBefore)
    expect(stack.platform.balance('USDC')).toBe(platformBefore)
    expect(alerts.map((a) => a.fields)).toEqual([expect.objectContaining({ transferId: r.transferId })])
  })

  it('a fee in kind above what was sent for it (ETH fell between signing and sending) is made good by a top-up from the funding subaccount, stored with the settlement and re-sent after a transport failure', async () => {
    stack.platform.fund('ETH', '2')
    const userId = await userWith('ETH', ETH(1))
    const r = await reserveFunding(sql(), { userId, asset: 'ETH', currency: 'ETH', amount: ETH(1) })
    const price = sim.engine.market.indexE18('ETH')
    const platformBefore = toE18(stack.platform.balance('ETH'))
    let summary: FundSummary
    try {
      summary = await runFunding(
        { ...deps, redis, log: silent },
        {
          // signed at the price of the moment; the exchange takes the fee (1 USD) at a fifth less
          afterStored: async () => sim.control.setPrice('ETH', fromE18((price * 4n) / 5n)),
          // the top-up's first send is lost in transport: it stays stored and goes out again next run
          afterSent: async () => sim.control.failNext({ method: 'private/transfer_spot', httpStatus: 503 }),
        },
      )
    } finally {
      sim.control.setPrice('ETH', fromE18(price))
    }
    expect(summary).toMatchObject({ funded: 1, failed: 0, toppedUp: 0 })
    const sub = (await exchangeIdOf(r.subaccountRowId)) as string
    const [created] = await sql()<{ params: { amount: string } }[]>`
        select params from subaccount_transfers where id = ${r.transferId}`
    const onTop = toE18(created?.params.amount ?? '0') - ETH(1)
    const [funded] = await sql()<{ payload: { feeAmount: string; feeExcess: string } }[]>`
        select payload from ledger_events where user_id = ${userId} and type = 'subaccount_funded'`
    const feeAmount = BigInt(funded?.payload.feeAmount ?? '0')
    expect(feeAmount).toBeGreaterThan(onTop) // about 1.25 times what was sent for it
    const shortfall = feeAmount - onTop
    const topUps = () =>
      sql()<{ state: string; amount: string; nonce: string; method: string }[]>`
          select state, amount::text as amount, nonce::text as nonce, method from subaccount_transfers
          where subaccount_id = ${r.subaccountRowId} and kind = 'top_up'`
    const [stored] = await topUps()
    // the shortfall rounded up to v3's finest amount (10^-12 ETH); the rest is booked as excess, in the user's subaccount
    const units = BigInt(stored?.amount ?? '0')
    expect(stored).toMatchObject({ state: 'submitted', method: 'deposit' })
    expect(units).toBe(((shortfall + 10n ** 6n - 1n) / 10n ** 6n) * 10n ** 6n)
    expect(BigInt(funded?.payload.feeExcess ?? '-1')).toBe(units - shortfall)
    // until it lands the user's subaccount is short, and reconciliation leaves it alone
    const exchangeEth = async () =>
      toE18((await exchange.getSubaccount(Number(sub))).collaterals.find((c) => c.asset_name === 'ETH')?.amount ?? '0')
    expect(await exchangeEth()).toBe(ETH(1) - shortfall)
    const [subRow] = await sql()<SubaccountDbRow[]>`
        select id, user_id, asset, exchange_id::text as exchange_id, accrued_to_ms::text as accrued_to_ms, stopped_at
        from subaccounts where id = ${r.subaccountRowId}`
    const reconcile = () => {
      const at = new Date(sim.control.nowMs())
      const opts = { mode: 'observe' as const, epsilon: '0', nowMs: at.getTime(), at }
      return reconcileSubaccount(deps, reconcileSources, toExchangeSubaccount(subRow as SubaccountDbRow), opts, silent)
    }
    expect((await reconcile()).outcome).toBe('in_flight')

    // the next run sends the stored top-up as it is: the user holds the full amount, the journal agrees to the wei
    expect(await runTick()).toMatchObject({ toppedUp: 1, failed: 0 })
    const [sent] = await topUps()
    expect(sent).toMatchObject({ state: 'done', nonce: stored?.nonce })
    expect(await exchangeEth()).toBe(ETH(1) + (units - shortfall))
    expect(await balanceOf(sql(), userSub(userId, sub, 'ETH'), 'ETH')).toBe(await exchangeEth())
    expect(await reconcile()).toEqual({ outcome: 'clean', divergences: [] })
    // the funding subaccount paid the amount, the whole fee and the rounding: what the journal took from it
    const spent = platformBefore - toE18(stack.platform.balance('ETH'))
    expect(spent).toBe(ETH(1) + feeAmount + (units - shortfall))
    expect(await runTick()).toMatchObject({ toppedUp: 0 })
    expect(await topUps()).toHaveLength(1)
  })

  it('a top-up refused (the funding subaccount short) fails with nothing moved and is signed afresh after its backoff', async () => {
    stack.platform.fund('ETH', '2')
    const userId = await userWith('ETH', ETH(1))
    const r = await reserveFunding(sql(), { userId, asset: 'ETH', currency: 'ETH', amount: ETH(1) })
    const price = sim.engine.market.indexE18('ETH')
    alerts.length = 0
    try {
      const summary = await runFunding(
        { ...deps, redis, log: silent },
        {
          afterStored: async () => sim.control.setPrice('ETH', fromE18((price * 2n) / 3n)),
          afterSent: async () => sim.control.failNext({ method: 'private/transfer_spot', code: 11000 }),
        },
      )
      expect(summary).toMatchObject({ funded: 1, toppedUp: 0 })
    } finally {
      sim.control.setPrice('ETH', fromE18(price))
    }
    const topUp = async () =>
      (
        await sql()<{ id: string; state: string; nonce: string; amount: string; last_error_code: string | null }[]>`
            select id, state, nonce::text as nonce, amount::text as amount, last_error_code from subaccount_transfers
            where subaccount_id = ${r.subaccountRowId} and kind = 'top_up'`
      )[0]
    const failed = await topUp()
    expect(failed).toMatchObject({ state: 'failed', last_error_code: 'TOP_UP_FAILED' })
    expect(alerts).toEqual([]) // refused for funds: expected to pass, no alert
    // within its backoff nothing is sent
    expect(await runTick()).toMatchObject({ toppedUp: 0 })
    expect((await topUp())?.state).toBe('failed')
    await sql()`update subaccount_transfers set next_attempt_at = now() where id = ${failed?.id ?? ''}`
    expect(await runTick()).toMatchObject({ toppedUp: 1 })
    const done = await topUp()
    expect(done).toMatchObject({ state: 'done', amount: failed?.amount })
    expect(done?.nonce).not.toBe(failed?.nonce) // a new signature, the refused one never moved anything
    const sub = (await exchangeIdOf(r.subaccountRowId)) as string
    const held = (await exchange.getSubaccount(Number(sub))).collaterals.find((c) => c.asset_name === 'ETH')?.amount
    expect(await balanceOf(sql(), userSub(userId, sub, 'ETH'), 'ETH')).toBe(toE18(held ?? '0'))
    expect(toE18(held ?? '0')).toBeGreaterThanOrEqual(ETH(1))
  })

  it("a creation's new subaccount is searched for among the unrecorded ones, never in the funding subaccount's history", async () => {
    // the real client, its deposit-history reads noted (the funding subaccount's holds every movement)
    const read: number[] = []
    const noting = new Proxy(exchange, {
      get(target, prop) {
        if (prop === 'getDepositHistory')
          return (p: { subaccount_id: number }) => {
            read.push(p.subaccount_id)
            return target.getDepositHistory(p)
          }
        const v = Reflect.get(target, prop, target)
        return typeof v === 'function' ? v.bind(target) : v
      },
    })
    const before = new Set((await exchange.getSubaccounts()).subaccount_ids)
    const tx = await exchange.createSubaccount({ asset_name: 'USDC', amount: '10' })
    const created = (await exchange.getSubaccounts()).subaccount_ids.find((id) => !before.has(id))
    expect(await createdSubaccountId({ ...deps, exchange: noting, log: silent }, tx.transaction_id, null)).toBe(created)
    expect(read).toContain(created)
    expect(read).not.toContain(stack.platform.fundingSubaccountId)
  })

  // last: it moves the simulator's clock past the signature's life
  it('stored but never sent, found after its signature expired: the row fails and the reservation is released', async () => {
    const userId = await userWith('USDC', USDC(70))
    const r = await reserveFunding(sql(), { userId, asset: 'ETH', currency: 'USDC', amount: USDC(70) })
    expect(await killChildAt('stored')).toBe(r.transferId)
    await redis.del(EXCHANGE_CYCLE_LOCK)
    expect(await freeBalance(sql(), userId, 'USDC')).toBe(0n)
    // inside the grace period the row keeps waiting (it might still show up in the histories)
    sim.control.advance((TRANSFER_SIGNATURE_TTL_SEC + 60) * 1000)
    expect(await runTick()).toMatchObject({ funded: 0, failed: 0, pending: 1 })
    expect((await transfer(r.transferId))?.state).toBe('submitted')
    sim.control.advance(LANDED_GRACE_SEC * 1000)
    alerts.length = 0
    expect(await runTick()).toMatchObject({ failed: 1 })
    expect(await transfer(r.transferId)).toMatchObject({ state: 'failed' })
    expect((await transfer(r.transferId))?.reason).toMatch(/expired/)
    expect(await freeBalance(sql(), userId, 'USDC')).toBe(USDC(70))
    expect(alerts).toHaveLength(1)
    expect(await eventCount(userId)).toBe(1)
  })
})
