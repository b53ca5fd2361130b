/**
 * Positions end to end against the Derive simulator over real HTTP, a real Postgres and Redis:
 * request → funding (the funding tick) → instrument chosen → maker order placed and repriced →
 * end of window crossed → fills recorded as option_sold → expiry recorded as option_settled; the
 * journal agrees with the exchange; cancelling and a paused signal leave no order resting.
 */
import { randomUUID } from 'node:crypto'
import { toBaseUnits } from '@wh/core'
import type { RunningSimulator } from '@wh/derive-simulator'
import { balanceOf, userExpense, userIncome, userSub } from '@wh/ledger'
import { reconcileSubaccount, runFunding, runReleases, withCycleLock } from '@wh/subaccounts'
import {
  advancePosition,
  cancelPosition,
  type PlaceDeps,
  requestPosition,
  runPlacing,
  tradingProfile,
} from '@wh/trading'
import type { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildWorkerDeps } from '../src/deps'
import { reconcileSources } from '../src/jobs/exchange/ticks'
import type { WorkerDeps } from '../src/ticks'
import { creditDeposit, type ExchangeStack, silent, startExchangeStack, tradingDepsOf } from './fixtures/exchange-stack'

const USDC = (n: number) => BigInt(n) * 1_000_000n
const MIN = 60_000
// a Monday 09:00 UTC: daily expiries at 08:00, the balanced profile's first one is Wednesday's
const START = Date.UTC(2026, 10, 23, 9, 0, 0)

describe('positions: placing, fills and settlement against the simulator', () => {
  let stack: ExchangeStack
  let sim: RunningSimulator
  let deps: WorkerDeps
  let redis: Redis
  let place: PlaceDeps
  const profile = tradingProfile('balanced')

  beforeAll(async () => {
    stack = await startExchangeStack({
      sim: { startMs: START },
      env: { TRADING_PROFILE: 'balanced', PLATFORM_FEE_RATE: '0.1' },
    })
    ;({ sim, deps, redis } = stack)
    sim.control.setPrice('ETH', '3000')
    place = tradingDepsOf(stack, profile).place
  })
  afterAll(async () => stack?.close())

  const sql = () => stack.sql
  async function userWith(amount: bigint): Promise<string> {
    const userId = randomUUID()
    await creditDeposit(sql(), userId, amount, { at: new Date(sim.control.nowMs()) })
    return userId
  }
  const position = async (id: string) =>
    (
      await sql()<
        {
          state: string
          instrument: string | null
          size_e18: string | null
          filled_e18: string
          premium: string
          fees: string
          reason: string | null
          outcome: string | null
          settlement_cost: string | null
          expiry_sec: number | null
          exchange_id: string | null
        }[]
      >`select p.state, p.instrument, p.size_e18::text, p.filled_e18::text, p.premium::text, p.fees::text, p.reason,
          p.outcome, p.settlement_cost::text, p.expiry_sec::float8 as expiry_sec, s.exchange_id::text
        from positions p join subaccounts s on s.id = p.subaccount_id where p.id = ${id}`
    )[0]
  const ours = async (exchangeId: string, id: string) =>
    (await deps.exchange.getOpenOrders(Number(exchangeId))).orders.filter((o) => o.label === id)
  const eventsOf = async (userId: string, type: string) =>
    sql()`select idempotency_key from ledger_events where user_id = ${userId} and type = ${type}`

  /** Runs funding and placing (through `placing`'s client) until the position reaches `wanted` (bounded). */
  async function until(id: string, wanted: string, placing: PlaceDeps = place) {
    for (let i = 0; i < 8; i++) {
      const p = await position(id)
      if (p?.state === wanted) return p
      await runFunding({ ...deps, redis, log: silent })
      await runPlacing(placing)
    }
    throw new Error(`position never reached ${wanted}: ${JSON.stringify(await position(id))}`)
  }

  it('sells a put through the maker window, records each fill, settles at expiry, and agrees with the exchange', async () => {
    const userId = await userWith(USDC(10_000))
    const req = await requestPosition(sql(), { userId, asset: 'ETH', side: 'put', amount: USDC(5_000) })
    expect(req.state).toBe('funding')

    const placing = await until(req.id, 'placing')
    expect(placing.instrument).toMatch(/^ETH-\d{8}-\d+-P$/)
    // Wednesday 08:00: the nearest expiry at least 40 h away
    expect(placing.expiry_sec).toBe(Date.UTC(2026, 10, 25, 8) / 1000)
    const exchangeId = placing.exchange_id as string
    await runPlacing(place)
    const [first] = await ours(exchangeId, req.id)
    expect(first).toMatchObject({ direction: 'sell', time_in_force: 'post_only' })
    const ticker = await deps.exchange.getTicker(placing.instrument as string)
    expect(Number(first?.limit_price)).toBeGreaterThan(Number(ticker.mark_price))

    // a reprice a minute later: still exactly one order of ours, a lower ask
    sim.control.advance(MIN)
    await runPlacing(place)
    const resting = await ours(exchangeId, req.id)
    expect(resting).toHaveLength(1)
    expect(Number(resting[0]?.limit_price)).toBeLessThan(Number(first?.limit_price))
    // re-running inside the reprice period sends nothing new
    await runPlacing(place)
    expect((await ours(exchangeId, req.id))[0]?.order_id).toBe(resting[0]?.order_id)

    // the window ends: the rest is crossed at the bid (balanced profile), the position is open
    sim.control.advance(profile.makerWindowMs)
    await runPlacing(place)
    const open = await position(req.id)
    expect(open?.state).toBe('open')
    expect(open?.filled_e18).toBe(open?.size_e18)
    expect(await ours(exchangeId, req.id)).toHaveLength(0)
    const sold = await eventsOf(userId, 'option_sold')
    const trades = (await deps.exchange.getTradeHistory({ subaccount_id: Number(exchangeId) })).trades
    expect(sold.map((e) => e.idempotency_key).sort()).toEqual(trades.map((t) => t.trade_id).sort())
    const premium = BigInt(open?.premium ?? '0')
    expect(premium).toBeGreaterThan(0n)
    expect(await balanceOf(sql(), userIncome(userId, 'premium'), 'USDC')).toBe(-premium)

    // reconciliation agrees: fills, fees and accruals accounted for, nothing diverges
    const [row] = await sql()<{ id: string }[]>`select subaccount_id as id from positions where id = ${req.id}`
    const sub = {
      id: row?.id as string,
      userId,
      asset: 'ETH',
      exchangeId: Number(exchangeId),
      ledgerId: exchangeId,
      accruedToMs: null,
      stoppedAt: null,
    }
    const nowMs = sim.control.nowMs()
    const rec = await reconcileSubaccount(
      { ...deps, redis },
      reconcileSources,
      sub,
      { mode: 'enforce', epsilon: '0.01', nowMs, at: new Date(nowMs) },
      silent,
    )
    expect(rec.outcome).toBe('clean')

    // re-running records nothing new
    await runPlacing(place)
    await runPlacing(place)
    expect(await eventsOf(userId, 'option_sold')).toHaveLength(sold.length)

    // the journal's subaccount plus the platform's fees not yet collected = the exchange's USDC
    const [fees] = await sql()<{ v: string }[]>`
      select coalesce(sum(platform_fee), 0)::text as v from position_fills where position_id = ${req.id}`
    const journal = await balanceOf(sql(), userSub(userId, exchangeId, 'USDC'), 'USDC')
    const exchangeUsdc = (await deps.exchange.getSubaccount(Number(exchangeId))).collaterals.find(
      (c) => c.asset_name === 'USDC',
    )?.amount as string
    const atExchange = toBaseUnits(exchangeUsdc, 6, 'down')
    const diff = atExchange - (journal + BigInt(fees?.v ?? '0'))
    // the exchange keeps 18 decimals, the journal 6: premium rounded down and fees up per fill, so
    // the journal never shows more than the exchange holds, and less by under a unit per fill
    expect(diff >= 0n && diff <= BigInt(sold.length) * 2n).toBe(true)

    // expiry in the money: ETH falls far below the strike; the settlement is recorded once
    sim.control.setPrice('ETH', '1500')
    sim.control.advanceTo(((open?.expiry_sec as number) + 60) * 1000)
    await runPlacing(place)
    const settled = await position(req.id)
    expect(settled).toMatchObject({ state: 'settled', outcome: 'itm' })
    const cost = BigInt(settled?.settlement_cost ?? '0')
    expect(cost).toBeGreaterThan(0n)
    expect(await balanceOf(sql(), userExpense(userId, 'settlement'), 'USDC')).toBe(cost)
    await runPlacing(place)
    expect(await eventsOf(userId, 'option_settled')).toHaveLength(1)
  })

  it('a position cancelled while placing leaves no order resting and ends cancelled', async () => {
    sim.control.setPrice('ETH', '3000')
    const userId = await userWith(USDC(10_000))
    const req = await requestPosition(sql(), { userId, asset: 'ETH', side: 'put', amount: USDC(3_000) })
    await until(req.id, 'placing')
    await runPlacing(place)
    const { exchange_id } = (await position(req.id)) as { exchange_id: string }
    expect(await ours(exchange_id, req.id)).toHaveLength(1)
    // a release asked meanwhile waits for the live position instead of withdrawing its collateral
    const [rel] = await sql()<{ id: string }[]>`
      insert into subaccount_releases (user_id, subaccount_id, state)
      select user_id, subaccount_id, 'requested' from positions where id = ${req.id} returning id`
    await runReleases({ ...deps, redis, log: silent })
    const [waiting] = await sql()<{ state: string; reason: string }[]>`
      select state, reason from subaccount_releases where id = ${rel?.id ?? ''}`
    expect(waiting).toEqual({ state: 'waiting', reason: 'positions still live: 1' })
    expect(await cancelPosition(sql(), userId, req.id)).toEqual({ outcome: 'cancel_requested', state: 'placing' })
    await runPlacing(place)
    expect(await ours(exchange_id, req.id)).toHaveLength(0)
    expect(await position(req.id)).toMatchObject({ state: 'cancelled', reason: 'cancelled by the user' })
  })

  it('a paused signal stops the placing: orders cancelled, nothing new sold', async () => {
    const userId = await userWith(USDC(10_000))
    const req = await requestPosition(sql(), { userId, asset: 'ETH', side: 'put', amount: USDC(3_000) })
    await until(req.id, 'placing')
    await runPlacing(place)
    const { exchange_id } = (await position(req.id)) as { exchange_id: string }
    await sql()`insert into signal_state (asset, side, paused, reason, signal_id, source, signal_at)
      values ('ETH', 'put', true, 'test', ${randomUUID()}, 'test', now())
      on conflict (asset, side) do update set paused = true`
    try {
      await runPlacing(place)
      expect(await ours(exchange_id, req.id)).toHaveLength(0)
      expect(await position(req.id)).toMatchObject({ state: 'cancelled', reason: 'paused by a signal' })
      expect(await eventsOf(userId, 'option_sold')).toHaveLength(0)
    } finally {
      await sql()`update signal_state set paused = false where asset = 'ETH' and side = 'put'`
    }
  })

  it("the placing tick sells the leg through the worker's own deps (buildWorkerDeps)", async () => {
    // deps built afresh by the worker's own buildWorkerDeps: the same account (the owner is the wallet here),
    // the simulator's /v3 endpoints
    const v3config = {
      ...stack.ctx.config,
      exchange: { ...stack.ctx.config.exchange, httpUrl: sim.v3HttpUrl, wsUrl: sim.v3WsUrl },
    }
    const v3deps = buildWorkerDeps(v3config, { sql: stack.sql, redis, log: silent }, { clock: deps.clock })
    const v3place: PlaceDeps = { ...place, exchange: v3deps.exchange }
    sim.control.setPrice('ETH', '3000')
    const userId = await userWith(USDC(10_000))
    const req = await requestPosition(sql(), { userId, asset: 'ETH', side: 'put', amount: USDC(4_000) })
    const placing = await until(req.id, 'placing', v3place)
    await runPlacing(v3place)
    const exchangeId = placing.exchange_id as string
    const [resting] = (await v3deps.exchange.getOpenOrders(Number(exchangeId))).orders.filter((o) => o.label === req.id)
    expect(resting).toMatchObject({
      direction: 'sell',
      time_in_force: 'post_only',
      instrument_name: placing.instrument,
    })
    // the stack's own client sees the order the worker's freshly built one placed
    expect((await ours(exchangeId, req.id)).map((o) => o.order_id)).toEqual([resting?.order_id])

    sim.control.advance(profile.makerWindowMs)
    await runPlacing(v3place)
    const open = await position(req.id)
    expect(open).toMatchObject({ state: 'open' })
    expect(open?.filled_e18).toBe(open?.size_e18)
    expect(BigInt(open?.premium ?? '0')).toBeGreaterThan(0n)
    const trades = (await v3deps.exchange.getTradeHistory({ subaccount_id: Number(exchangeId) })).trades
    const sold = await eventsOf(userId, 'option_sold')
    expect(sold.map((e) => e.idempotency_key).sort()).toEqual(trades.map((t) => t.trade_id).sort())
    expect(trades.every((t) => t.direction === 'sell' && t.tx_status === 'settled')).toBe(true)
  })

  it('advancePosition steps only the position it names, one step per call, and not while the cycle lock is held', async () => {
    const a = await requestPosition(sql(), {
      userId: await userWith(USDC(10_000)),
      asset: 'ETH',
      side: 'put',
      amount: USDC(5_000),
    })
    const b = await requestPosition(sql(), {
      userId: await userWith(USDC(10_000)),
      asset: 'ETH',
      side: 'put',
      amount: USDC(5_000),
    })
    const funding = async (id: string) =>
      (
        await sql()<{ state: string }[]>`
          select f.state from positions p join subaccount_transfers f on f.id = p.funding_transfer_id where p.id = ${id}`
      )[0]?.state
    for (let i = 0; i < 8 && ((await funding(a.id)) !== 'funded' || (await funding(b.id)) !== 'funded'); i++)
      await runFunding({ ...deps, redis, log: silent })
    expect([await funding(a.id), await funding(b.id)]).toEqual(['funded', 'funded'])

    // another holder of the exchange cycle lock: nothing moves
    const held = await withCycleLock(redis, () => advancePosition(place, a.id))
    expect(held).toEqual({ ran: true, value: { locked: true, steps: {} } })
    expect((await position(a.id))?.state).toBe('funding')

    expect(await advancePosition(place, a.id)).toEqual({ locked: false, steps: { funded: 1 } })
    expect((await position(a.id))?.state).toBe('requested')
    expect(await advancePosition(place, a.id)).toEqual({ locked: false, steps: { chosen: 1 } })
    const placing = await position(a.id)
    expect(placing?.state).toBe('placing')
    expect(await advancePosition(place, a.id)).toEqual({ locked: false, steps: { placed: 1 } })
    expect(await ours(placing?.exchange_id as string, a.id)).toHaveLength(1)
    // the other position waited for its own step
    expect((await position(b.id))?.state).toBe('funding')
    // a position that is not live steps nothing
    expect(await advancePosition(place, randomUUID())).toEqual({ locked: false, steps: {} })
  })

  it('collateral too small for the minimum size fails the position with the reason', async () => {
    const userId = await userWith(USDC(100))
    const req = await requestPosition(sql(), { userId, asset: 'ETH', side: 'put', amount: USDC(50) })
    const failed = await until(req.id, 'failed')
    expect(failed.reason).toMatch(/below the minimum/)
  })
})
