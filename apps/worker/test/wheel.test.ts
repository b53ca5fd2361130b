import type { RunningSimulator } from '@wh/derive-simulator'
import { toE18 } from '@wh/exchange'
import { balanceOf, userSub } from '@wh/ledger'
import { reconcileSubaccount, runFunding, withCycleLock } from '@wh/subaccounts'
import {
  advancePosition,
  advanceWheel,
  cancelPosition,
  type PlaceDeps,
  type PriceReader,
  pastWheelDeadline,
  runPlacing,
  runWheels,
  startWheel,
  stopWheel,
  tradingProfile,
  type WheelDeps,
} from '@wh/trading'
import type { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { reconcileSources } from '../src/jobs/exchange/ticks'
import type { WorkerDeps } from '../src/ticks'
import {
  type ExchangeStack,
  userWith as fixtureUserWith,
  silent,
  startExchangeStack,
  tradingDepsOf,
} from './fixtures/exchange-stack'

const USDC = (n: number) => BigInt(n) * 1_000_000n
const MIN = 60_000
const START = Date.UTC(2026, 10, 23, 9, 0, 0) // a Monday, 09:00 UTC

describe('the wheel runner against the simulator', () => {
  let stack: ExchangeStack
  let sim: RunningSimulator
  let deps: WorkerDeps
  let redis: Redis
  let place: PlaceDeps
  let wheel: WheelDeps
  const profile = tradingProfile('balanced')

  beforeAll(async () => {
    stack = await startExchangeStack({
      sim: { startMs: START },
      env: { TRADING_PROFILE: 'balanced', PLATFORM_FEE_RATE: '0.1', WHEEL_ENABLED: 'true' },
    })
    ;({ sim, deps, redis } = stack)
    sim.control.setPrice('ETH', '3000')
    ;({ place, wheel } = tradingDepsOf(stack, profile))
  })
  afterAll(async () => stack?.close())

  const sql = () => stack.sql
  const userWith = (amount: bigint) => fixtureUserWith(stack, amount)
  const legState = async (id: string) =>
    (await sql()<{ state: string }[]>`select state from positions where id = ${id}`)[0]?.state
  const wheelRow = async (id: string) =>
    (
      await sql()<
        {
          state: string
          reason: string | null
          current_position_id: string | null
          cycles: number
          exchange_id: string
        }[]
      >`select w.state, w.reason, w.current_position_id, w.cycles::int as cycles, s.exchange_id::text
        from wheels w join subaccounts s on s.id = w.subaccount_id where w.id = ${id}`
    )[0]
  async function until(id: string, wanted: string) {
    for (let i = 0; i < 8; i++) {
      if ((await legState(id)) === wanted) return
      await runFunding({ ...deps, redis, log: silent })
      await runPlacing(place)
    }
    throw new Error(
      `leg ${id} never reached ${wanted} (${await legState(id)}: ${(await sql()`select reason from positions where id = ${id}`)[0]?.reason})`,
    )
  }

  it('after the first put expires, the next leg sells everything the subaccount holds; a stop now leaves no order', async () => {
    const userId = await userWith(USDC(10_000))
    const { wheelId, leg } = await startWheel(sql(), { userId, asset: 'ETH', amount: USDC(5_000) })
    await until(leg.id, 'placing')
    await runPlacing(place)
    sim.control.advance(profile.makerWindowMs + MIN)
    await runPlacing(place)
    expect(await legState(leg.id)).toBe('open')
    expect((await runWheels(wheel)).steps).toEqual({ leg_live: 1 })

    // out of the money at expiry: the premium stays, the leg settles, the runner opens leg two
    const [{ expiry_sec } = { expiry_sec: 0 }] = await sql()<{ expiry_sec: number }[]>`
      select expiry_sec::float8 as expiry_sec from positions where id = ${leg.id}`
    sim.control.setPrice('ETH', '3300')
    sim.control.advanceTo((expiry_sec + 60) * 1000)
    await runPlacing(place)
    expect(await legState(leg.id)).toBe('settled')
    expect((await runWheels(wheel)).steps).toEqual({ put_opened: 1 })
    const w = await wheelRow(wheelId)
    expect(w).toMatchObject({ state: 'running', cycles: 2, reason: null })
    const [second] = await sql()<{ id: string; collateral_amount: string; side: string; state: string }[]>`
      select id, collateral_amount::text, side, state from positions where id = ${w?.current_position_id ?? ''}`
    const held = await balanceOf(sql(), userSub(userId, w?.exchange_id ?? '', 'USDC'), 'USDC')
    // all of it: the first collateral plus the premium net of fees, nothing funded anew
    expect(second).toMatchObject({ side: 'put', state: 'requested' })
    expect(BigInt(second?.collateral_amount ?? '0')).toBe(held)
    expect(held).toBeGreaterThan(USDC(5_000))
    // a second run inside RETRY_MS opens nothing more
    expect((await runWheels(wheel)).steps).toEqual({ leg_live: 1 })

    await until(second?.id ?? '', 'placing')
    await runPlacing(place)
    expect((await deps.exchange.getOpenOrders(Number(w?.exchange_id))).orders).toHaveLength(1)
    expect(await stopWheel(sql(), userId, wheelId, 'now', new Date(sim.control.nowMs()))).toEqual({
      state: 'stopping',
      stopMode: 'now',
    })
    await runPlacing(place)
    expect((await runWheels(wheel)).steps).toEqual({ stopped: 1 })
    expect((await deps.exchange.getOpenOrders(Number(w?.exchange_id))).orders).toHaveLength(0)
    expect(await wheelRow(wheelId)).toMatchObject({ state: 'stopped' })
    const [stop] = await sql()<{ n: number }[]>`
      select count(*)::int as n from ledger_events where user_id = ${userId} and type = 'stop_raised'`
    expect(stop?.n).toBe(1)
    // a stopped wheel opens nothing
    expect((await runWheels(wheel)).steps).toEqual({})
    // the journal agrees with the exchange at the end: premiums, fees, settlement, accruals
    const [sub] = await sql()<{ id: string }[]>`select subaccount_id as id from wheels where id = ${wheelId}`
    const nowMs = sim.control.nowMs()
    const rec = await reconcileSubaccount(
      { ...deps, redis },
      reconcileSources,
      {
        id: sub?.id as string,
        userId,
        asset: 'ETH',
        exchangeId: Number(w?.exchange_id),
        ledgerId: w?.exchange_id as string,
        accruedToMs: null,
        stoppedAt: null,
      },
      { mode: 'enforce', epsilon: '0.01', nowMs, at: new Date(nowMs) },
      silent,
    )
    expect(rec.outcome).toBe('clean')
  })

  it('after 20:00 UTC the runner skips with the reason, and opens the leg the next morning', async () => {
    const userId = await userWith(USDC(10_000))
    const { wheelId, leg } = await startWheel(sql(), { userId, asset: 'BTC', amount: USDC(5_000) })
    await until(leg.id, 'requested')
    // the first leg ends without a sale before it is placed (as a maker window that sold nothing): the
    // collateral is back in the subaccount, unclaimed. (A leg the user cancels stops the wheel instead:
    // apps/api/test/wheel-leg-cancel.test.ts.)
    await sql()`update positions set state = 'cancelled', reason = 'nothing sold' where id = ${leg.id}`
    const now = new Date(sim.control.nowMs())
    const evening = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), 20, 30)
    sim.control.advanceTo(evening)
    expect((await runWheels(wheel)).steps).toEqual({ skipped: 1 })
    expect(await wheelRow(wheelId)).toMatchObject({
      cycles: 1,
      reason: 'after the 20:00 UTC deadline: the next leg waits for tomorrow',
    })
    sim.control.advanceTo(evening + 13 * 60 * MIN) // 09:30 the next day
    expect((await runWheels(wheel)).steps).toEqual({ put_opened: 1 })
    expect(await wheelRow(wheelId)).toMatchObject({ cycles: 2, reason: null })
  })

  it('a stop now buys the sold leg back at the quoted cost; the wheel is stopped once the leg is closed', async () => {
    const userId = await userWith(USDC(10_000))
    const { wheelId, leg } = await startWheel(sql(), { userId, asset: 'ETH', amount: USDC(5_000) })
    await until(leg.id, 'placing')
    await runPlacing(place)
    sim.control.advance(profile.makerWindowMs + MIN)
    await runPlacing(place)
    expect(await legState(leg.id)).toBe('open')
    const prices: PriceReader = async (instrument) => {
      const t = await deps.exchange.getTicker(instrument)
      return { askE18: toE18(t.best_ask_price), markE18: toE18(t.mark_price), tickE18: toE18(t.tick_size) }
    }
    const stop = await stopWheel(sql(), userId, wheelId, 'now', new Date(sim.control.nowMs()), prices)
    expect(stop).toMatchObject({ state: 'stopping', stopMode: 'now' })
    expect(stop.closeQuote?.cost).toBeGreaterThan(0n)
    expect(await legState(leg.id)).toBe('closing')
    // while the leg is closing the wheel is not stopped
    await runWheels(wheel)
    expect(await wheelRow(wheelId)).toMatchObject({ state: 'stopping' })
    await runPlacing(place)
    expect(await legState(leg.id)).toBe('closed')
    expect((await runWheels(wheel)).steps).toMatchObject({ stopped: 1 })
    expect(await wheelRow(wheelId)).toMatchObject({ state: 'stopped' })
    const w = await wheelRow(wheelId)
    const sub = await deps.exchange.getSubaccount(Number(w?.exchange_id))
    expect(sub.positions.filter((p) => p.instrument_name.endsWith('-P') && p.amount !== '0')).toEqual([])
    expect((await deps.exchange.getOpenOrders(Number(w?.exchange_id))).orders).toHaveLength(0)
  })

  it('does nothing while WHEEL_ENABLED is false', async () => {
    const userId = await userWith(USDC(1_000))
    const { leg } = await startWheel(sql(), { userId, asset: 'ETH', amount: USDC(500) })
    await cancelPosition(sql(), userId, leg.id)
    expect(await runWheels({ ...wheel, enabled: false })).toEqual({ locked: false, disabled: true, steps: {} })
  })

  it('advanceWheel turns only the wheel it names, and not while the cycle lock is held or the runner is off', async () => {
    const [a, b] = [await userWith(USDC(2_000)), await userWith(USDC(2_000))]
    const wa = await startWheel(sql(), { userId: a, asset: 'ETH', amount: USDC(1_000) })
    const wb = await startWheel(sql(), { userId: b, asset: 'ETH', amount: USDC(1_000) })
    const funded = async (id: string) =>
      (
        await sql()<{ state: string }[]>`
          select f.state from positions p join subaccount_transfers f on f.id = p.funding_transfer_id where p.id = ${id}`
      )[0]?.state === 'funded'
    for (let i = 0; i < 8 && !((await funded(wa.leg.id)) && (await funded(wb.leg.id))); i++)
      await runFunding({ ...deps, redis, log: silent })
    for (const w of [wa, wb]) await advancePosition(place, w.leg.id)
    // both first legs end without a sale before they are placed: the collateral is back, unclaimed
    await sql()`update positions set state = 'cancelled', reason = 'nothing sold' where id in ${sql()([wa.leg.id, wb.leg.id])}`
    const now = new Date(sim.control.nowMs())
    if (pastWheelDeadline(now))
      sim.control.advanceTo(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1, 9, 30))

    expect(await withCycleLock(redis, () => advanceWheel(wheel, wa.wheelId))).toEqual({
      ran: true,
      value: { locked: true, disabled: false, steps: {} },
    })
    expect(await advanceWheel({ ...wheel, enabled: false }, wa.wheelId)).toEqual({
      locked: false,
      disabled: true,
      steps: {},
    })
    expect((await wheelRow(wa.wheelId))?.cycles).toBe(1)
    expect(await advanceWheel(wheel, wa.wheelId)).toEqual({ locked: false, disabled: false, steps: { put_opened: 1 } })
    expect(await wheelRow(wa.wheelId)).toMatchObject({ state: 'running', cycles: 2, reason: null })
    // the other wheel waited for its own turn
    expect(await wheelRow(wb.wheelId)).toMatchObject({ cycles: 1, current_position_id: wb.leg.id })
    for (const [userId, w] of [
      [a, wa],
      [b, wb],
    ] as const)
      await stopWheel(sql(), userId, w.wheelId, 'now', new Date(sim.control.nowMs()))
  })
})
