/**
 * The release tick against the Derive simulator over real HTTP, a real Postgres and Redis: a
 * release waits (saying why) while the subaccount has open positions or orders or the exchange
 * holds less than the journal, then withdraws one leg per currency and records
 * subaccount_released into transit, once per leg (a leg is a transfer_spot back to the funding
 * subaccount: Derive v3).
 */
import { randomUUID } from 'node:crypto'
import type { RunningSimulator } from '@wh/derive-simulator'
import { type DeriveClient, toE18 } from '@wh/exchange'
import { append, balanceOf, freeBalance, reserveFunding, userSub, userTransit } from '@wh/ledger'
import { type FundSummary, processOpenReleases, processReleaseById, type ReleaseSummary } from '@wh/subaccounts'
import type { integrationContext } from '@wh/testkit'
import type { Job } from 'bullmq'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fundTick, releaseTick } from '../src/jobs/exchange/ticks'
import { ticks } from '../src/jobs/index'
import type { TickContext, WorkerDeps } from '../src/ticks'
import { creditDeposit, type ExchangeStack, silent, startExchangeStack } from './fixtures/exchange-stack'

const USDC = (n: number) => BigInt(n) * 1_000_000n
const ETH_HALF = 5n * 10n ** 17n

describe('release tick against the simulator', () => {
  let sim: RunningSimulator
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  let deps: WorkerDeps
  let exchange: DeriveClient
  let tickCtx: TickContext
  let _alerts: ExchangeStack['alerts']
  let stack: ExchangeStack

  beforeAll(async () => {
    stack = await startExchangeStack({ sim: {}, wallet: { USDC: '1000000', ETH: '10' } })
    ;({ sim, ctx, deps } = stack)
    _alerts = stack.alerts
    exchange = deps.exchange
    tickCtx = { log: silent, deps, queues: new Map() }
  })
  afterAll(async () => stack?.close())

  const sql = () => ctx.database.sql
  const fund = () => fundTick.process({} as Job, tickCtx) as Promise<FundSummary>
  const release = () => releaseTick.process({} as Job, tickCtx) as Promise<ReleaseSummary>

  /** A user with a funded ETH subaccount: `usdc` USDC (and `eth` ETH) in it, 100 USDC left in transit. */
  async function fundedUser(usdc: bigint, eth = 0n) {
    const userId = randomUUID()
    const deposit = (currency: string, amount: bigint) => creditDeposit(sql(), userId, amount, { currency })
    await deposit('USDC', usdc + USDC(100))
    const r = await reserveFunding(sql(), { userId, asset: 'ETH', currency: 'USDC', amount: usdc })
    expect(await fund()).toMatchObject({ funded: 1 })
    if (eth > 0n) {
      await deposit('ETH', eth)
      await reserveFunding(sql(), { userId, asset: 'ETH', currency: 'ETH', amount: eth })
      expect(await fund()).toMatchObject({ funded: 1 })
    }
    const [s] = await sql()<{ exchange_id: string }[]>`
      select exchange_id::text as exchange_id from subaccounts where id = ${r.subaccountRowId}`
    return { userId, subRow: r.subaccountRowId, sub: s?.exchange_id as string }
  }
  async function requestRelease(userId: string, subRow: string): Promise<string> {
    const [r] = await sql()<{ id: string }[]>`
      insert into subaccount_releases (user_id, subaccount_id, state) values (${userId}, ${subRow}, 'requested')
      returning id`
    return r?.id as string
  }
  const releaseRow = async (id: string) =>
    (
      await sql()<
        { state: string; reason: string | null }[]
      >`select state, reason from subaccount_releases where id = ${id}`
    )[0]
  const legs = async (releaseId: string) =>
    sql()<{ id: string; state: string; currency: string; amount: string; nonce: string; reason: string | null }[]>`
      select id, state, currency, amount::text as amount, nonce::text as nonce, reason from subaccount_transfers
      where release_id = ${releaseId} order by created_at, id`
  const eventsOf = async (userId: string, type: string) =>
    sql()<{ idempotency_key: string }[]>`
      select idempotency_key from ledger_events where user_id = ${userId} and type = ${type} order by recorded_at`
  const collateral = async (sub: string, asset: string) =>
    (await exchange.getSubaccount(Number(sub))).collaterals.find((c) => c.asset_name === asset)?.amount ?? '0'

  it('is registered on the treasury queue', () => {
    const t = ticks.find((x) => x.name === 'exchange-release')
    expect(t).toBe(releaseTick)
    expect(t?.queue).toBe('treasury')
  })

  it('waits while a position or an order is open, or the exchange holds less than the journal; then releases into transit', async () => {
    const { userId, subRow, sub } = await fundedUser(USDC(1_000))
    const sid = Number(sub)
    const perp = await exchange.getTicker('ETH-PERP')
    // the user's own perp, traded as the owner: not the worker's duty (its key trades options only)
    const buy = await stack.owner.order({
      subaccount_id: sid,
      instrument_name: 'ETH-PERP',
      direction: 'buy',
      amount: '0.1',
      limit_price: perp.best_ask_price,
      max_fee: '10',
    })
    expect(buy.trades).toHaveLength(1)

    const id = await requestRelease(userId, subRow)
    expect(await release()).toMatchObject({ waiting: 1, released: 0 })
    expect(await releaseRow(id)).toEqual({ state: 'waiting', reason: 'open positions: ETH-PERP' })
    expect(await release()).toMatchObject({ waiting: 1 }) // keeps retrying, nothing moves
    expect(await legs(id)).toHaveLength(0)

    // close the position; leave a resting order far below the market
    const t = await exchange.getTicker('ETH-PERP')
    await stack.owner.order({
      subaccount_id: sid,
      instrument_name: 'ETH-PERP',
      direction: 'sell',
      amount: '0.1',
      limit_price: t.best_bid_price,
      max_fee: '10',
    })
    const low = (toE18(t.best_bid_price) / 2n / 10n ** 18n).toString()
    await stack.owner.order({
      subaccount_id: sid,
      instrument_name: 'ETH-PERP',
      direction: 'buy',
      amount: '0.1',
      limit_price: low,
      max_fee: '10',
      time_in_force: 'post_only',
    })
    expect(await release()).toMatchObject({ waiting: 1 })
    expect(await releaseRow(id)).toEqual({ state: 'waiting', reason: 'open orders: 1' })
    await stack.owner.cancelAll(sid)

    // the round trip cost fees and the spread, which nothing has journaled yet
    expect(await release()).toMatchObject({ waiting: 1 })
    expect((await releaseRow(id))?.reason).toMatch(/exchange holds less USDC than the journal/)
    const held = BigInt(Math.round(Number(await collateral(sub, 'USDC')) * 1e6))
    const journal = await balanceOf(sql(), userSub(userId, sub, 'USDC'), 'USDC')
    expect(held).toBeLessThan(journal)
    // what reconciliation would record for the gap
    await append(sql(), {
      type: 'reconciliation_adjustment',
      payload: { userId, subaccountId: sub, currency: 'USDC', bucket: 1_800_000_000, delta: held - journal },
      occurredAt: new Date(),
    })
    const transitBefore = await balanceOf(sql(), userTransit(userId), 'USDC')

    expect(await release()).toMatchObject({ released: 1 })
    expect(await releaseRow(id)).toEqual({ state: 'released', reason: null })
    const [leg] = await legs(id)
    expect(leg).toMatchObject({ state: 'released', currency: 'USDC', amount: held.toString() })
    expect(await balanceOf(sql(), userSub(userId, sub, 'USDC'), 'USDC')).toBe(0n)
    expect(await balanceOf(sql(), userTransit(userId), 'USDC')).toBe(transitBefore + held)
    expect(await freeBalance(sql(), userId, 'USDC')).toBe(transitBefore + held)
    expect(await collateral(sub, 'USDC')).toBe('0')
    expect((await eventsOf(userId, 'subaccount_released')).map((e) => e.idempotency_key)).toEqual([
      `release:${leg?.id}`,
    ])

    const withdrawals = (await exchange.getWithdrawalHistory({ subaccount_id: sid })).events.length
    expect(await release()).toMatchObject({ released: 0, waiting: 0, withdrawing: 0 })
    expect(await release()).toMatchObject({ released: 0, waiting: 0, withdrawing: 0 })
    expect(await eventsOf(userId, 'subaccount_released')).toHaveLength(1)
    expect((await exchange.getWithdrawalHistory({ subaccount_id: sid })).events).toHaveLength(withdrawals)
  })

  it('one leg per currency; a margin refusal makes the release wait with the reason, the next run withdraws the rest', async () => {
    const { userId, subRow, sub } = await fundedUser(USDC(300), ETH_HALF)
    const id = await requestRelease(userId, subRow)
    sim.control.failNext({ method: stack.platform.method('withdraw'), code: 11000 })
    expect(await release()).toMatchObject({ waiting: 1 })
    const first = await legs(id)
    expect(first.map((l) => [l.currency, l.state])).toEqual(
      expect.arrayContaining([
        ['ETH', expect.any(String)],
        ['USDC', expect.any(String)],
      ]),
    )
    expect(first.filter((l) => l.state === 'failed')).toHaveLength(1)
    expect(first.filter((l) => l.state === 'released')).toHaveLength(1)
    expect((await releaseRow(id))?.reason).toMatch(/exchange refused the withdrawal/)

    expect(await release()).toMatchObject({ released: 1 })
    const all = await legs(id)
    expect(all).toHaveLength(3)
    expect(
      all
        .filter((l) => l.state === 'released')
        .map((l) => l.currency)
        .sort(),
    ).toEqual(['ETH', 'USDC'])
    expect(await balanceOf(sql(), userSub(userId, sub, 'USDC'), 'USDC')).toBe(0n)
    expect(await balanceOf(sql(), userSub(userId, sub, 'ETH'), 'ETH')).toBe(0n)
    expect(await balanceOf(sql(), userTransit(userId), 'ETH')).toBe(ETH_HALF)
    expect(await balanceOf(sql(), userTransit(userId), 'USDC')).toBe(USDC(400))
    expect(await collateral(sub, 'ETH')).toBe('0')
    expect(await eventsOf(userId, 'subaccount_released')).toHaveLength(2)
  })

  it('the legs of a round go out in signing order: two legs land in one run (v3 takes a sender its transfer nonces only increasing)', async () => {
    // the legs' ids are random: six releases leave a chance of 1 in 64 that id order happens to be signing order
    for (let i = 0; i < 6; i++) {
      const { userId, subRow, sub } = await fundedUser(USDC(120), ETH_HALF)
      const id = await requestRelease(userId, subRow)
      expect(await release()).toMatchObject({ released: 1, waiting: 0, withdrawing: 0 })
      expect((await legs(id)).map((l) => [l.currency, l.state]).sort()).toEqual([
        ['ETH', 'released'],
        ['USDC', 'released'],
      ])
      expect(await collateral(sub, 'ETH')).toBe('0')
      expect(await balanceOf(sql(), userTransit(userId), 'ETH')).toBe(ETH_HALF)
    }
  })

  it('a run that dies after storing the signed legs: the next run sends those same legs once', async () => {
    const { userId, subRow, sub } = await fundedUser(USDC(200))
    const id = await requestRelease(userId, subRow)
    const crashed = await processOpenReleases(
      { ...deps, log: silent },
      {
        afterStored: async () => {
          throw new Error('killed')
        },
      },
    )
    expect(crashed).toMatchObject({ released: 0 })
    const [stored] = await legs(id)
    expect(stored?.state).toBe('submitted')
    expect(await releaseRow(id)).toMatchObject({ state: 'withdrawing' })
    expect((await exchange.getWithdrawalHistory({ subaccount_id: Number(sub) })).events).toHaveLength(0)
    // the thrown error backed the release off; a process that really died recorded nothing: due now
    const [backedOff] = await ctx.database.sql<{ attempts: number; due: boolean }[]>`
      select attempts, next_attempt_at <= now() as due from subaccount_releases where id = ${id}`
    expect(backedOff).toEqual({ attempts: 1, due: false })
    await ctx.database.sql`update subaccount_releases set next_attempt_at = now() where id = ${id}`

    expect(await release()).toMatchObject({ released: 1 })
    const after = await legs(id)
    expect(after).toHaveLength(1)
    expect(after[0]).toMatchObject({ state: 'released', nonce: stored?.nonce })
    expect((await exchange.getWithdrawalHistory({ subaccount_id: Number(sub) })).events).toHaveLength(1)
    expect(await eventsOf(userId, 'subaccount_released')).toHaveLength(1)
  })

  it('a stopped subaccount is not released; a funding reserved meanwhile waits for the release', async () => {
    const { userId, subRow } = await fundedUser(USDC(50))
    await sql()`update subaccounts set stopped_at = now(), stop_reason = 'operator' where id = ${subRow}`
    const id = await requestRelease(userId, subRow)
    const pending = await reserveFunding(sql(), { userId, asset: 'ETH', currency: 'USDC', amount: USDC(10) })
    expect(await release()).toMatchObject({ waiting: 1 })
    expect(await releaseRow(id)).toEqual({ state: 'waiting', reason: 'subaccount stopped: operator' })
    await sql()`update subaccounts set stopped_at = null, stop_reason = null where id = ${subRow}`
    expect(await fund()).toMatchObject({ funded: 0, held: 1 })
    const [held] = await sql()<{ state: string; reason: string }[]>`
      select state, reason from subaccount_transfers where id = ${pending.transferId}`
    expect(held).toEqual({ state: 'reserved', reason: 'a release of this subaccount is open' })
    expect(await release()).toMatchObject({ released: 1 })
    expect(await fund()).toMatchObject({ funded: 1 })
  })

  it('one release run by its id (a job per release): only that one moves; a released one is not run again', async () => {
    const a = await fundedUser(USDC(300))
    const b = await fundedUser(USDC(200))
    const id = await requestRelease(a.userId, a.subRow)
    const other = await requestRelease(b.userId, b.subRow)
    const transitBefore = await balanceOf(sql(), userTransit(a.userId), 'USDC')
    const one = () => processReleaseById({ ...deps, log: silent }, id)

    expect(await one()).toBe('released')
    expect(await releaseRow(id)).toEqual({ state: 'released', reason: null })
    expect(await balanceOf(sql(), userTransit(a.userId), 'USDC')).toBe(transitBefore + USDC(300))
    expect(await collateral(a.sub, 'USDC')).toBe('0')
    expect(await releaseRow(other)).toEqual({ state: 'requested', reason: null })
    expect(await legs(other)).toHaveLength(0)

    expect(await one()).toBeNull()
    expect(await eventsOf(a.userId, 'subaccount_released')).toHaveLength(1)
    // the other goes with the next run
    expect(await release()).toMatchObject({ released: 1 })
  })
})
