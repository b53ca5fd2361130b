/**
 * The wheel's decision log (docs/trading.md "Why: the decision log") against the Derive simulator
 * over real HTTP, a real Postgres and Redis: a wheel's first leg records its expiry and strike with
 * the candidates considered, a wait (yield below the floor, the 20:00 UTC deadline) is recorded once
 * however many ticks repeat it, and every new decision is published on Redis with its user.
 */
import { randomUUID } from 'node:crypto'
import type { RunningSimulator } from '@wh/derive-simulator'
import { runFunding } from '@wh/subaccounts'
import {
  type PlaceDeps,
  runPlacing,
  runWheels,
  type StrikeFacts,
  startWheel,
  tradingProfile,
  WHEEL_DECISIONS_CHANNEL,
  type WheelDecisionMessage,
  type WheelDeps,
} from '@wh/trading'
import type { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { WorkerDeps } from '../src/ticks'
import { creditDeposit, type ExchangeStack, silent, startExchangeStack, tradingDepsOf } from './fixtures/exchange-stack'

const USDC = (n: number) => BigInt(n) * 1_000_000n
const MIN = 60_000
const START = Date.UTC(2026, 10, 23, 9, 0, 0) // a Monday, 09:00 UTC

interface DecisionRow {
  kind: string
  reason: string
  position_id: string | null
  facts: Record<string, unknown>
}

describe('the wheel decision log', () => {
  let stack: ExchangeStack
  let sim: RunningSimulator
  let deps: WorkerDeps
  let redis: Redis
  let subscriber: Redis
  let place: PlaceDeps
  let wheel: WheelDeps
  const published: WheelDecisionMessage[] = []
  const profile = tradingProfile('balanced')

  beforeAll(async () => {
    stack = await startExchangeStack({
      sim: { startMs: START },
      env: { TRADING_PROFILE: 'balanced', PLATFORM_FEE_RATE: '0.1', WHEEL_ENABLED: 'true' },
    })
    ;({ sim, deps, redis } = stack)
    sim.control.setPrice('ETH', '3000')
    ;({ place, wheel } = tradingDepsOf(stack, profile))
    subscriber = redis.duplicate()
    subscriber.on('message', (_channel, message) => published.push(JSON.parse(message)))
    await subscriber.subscribe(WHEEL_DECISIONS_CHANNEL)
  })
  afterAll(async () => {
    await subscriber?.quit()
    await stack?.close()
  })

  const sql = () => stack.sql
  const decisions = (wheelId: string) =>
    sql()<DecisionRow[]>`
      select kind, reason, position_id, facts from wheel_decisions where wheel_id = ${wheelId} order by seq`
  const publishedFor = (userId: string) => published.filter((m) => m.userId === userId)
  async function until(cond: () => Promise<boolean>, what: string, step: () => Promise<unknown>) {
    for (let i = 0; i < 40; i++) {
      if (await cond()) return
      await step()
      await new Promise((r) => setTimeout(r, 50))
    }
    throw new Error(`never: ${what}`)
  }
  const legState = async (id: string) =>
    (await sql()<{ state: string }[]>`select state from positions where id = ${id}`)[0]?.state

  it('the first leg waits once for a yield below the floor, then records its expiry and strike with the candidates', async () => {
    const userId = randomUUID()
    await creditDeposit(sql(), userId, USDC(10_000), { at: new Date(sim.control.nowMs()) })
    const { wheelId, leg } = await startWheel(sql(), { userId, asset: 'ETH', amount: USDC(5_000) })
    // a floor no premium reaches: three placing ticks, one decision
    const picky = { ...place, profile: { ...profile, minAnnualisedYieldBps: 10_000_000 } }
    await until(
      async () => (await decisions(wheelId)).length > 0,
      'a first decision',
      async () => {
        await runFunding({ ...deps, redis, log: silent })
        await runPlacing(picky)
      },
    )
    for (let i = 0; i < 3; i++) {
      await runPlacing(picky)
      sim.control.advance(10_000)
    }
    expect(await legState(leg.id)).toBe('requested')
    const waits = await decisions(wheelId)
    expect(waits.map((d) => [d.kind, d.reason])).toEqual([['waiting', 'yield_below_floor']])
    expect(waits[0]?.facts).toMatchObject({ yield: { floorBps: 10_000_000 } })

    await runPlacing(place)
    expect(await legState(leg.id)).toBe('placing')
    const [position] = await sql()<{ instrument: string; expiry_sec: number }[]>`
      select instrument, expiry_sec::float8 as expiry_sec from positions where id = ${leg.id}`
    const rows = await decisions(wheelId)
    expect(rows.map((d) => [d.kind, d.reason])).toEqual([
      ['waiting', 'yield_below_floor'],
      ['expiry_chosen', 'nearest_expiry_in_window'],
      ['strike_chosen', 'nearest_target_delta'],
    ])
    const expiries = rows[1]?.facts.expiries as {
      candidates: { expiry: string; tenorHours: number; inWindow: boolean }[]
      chosen: string
    }
    expect(expiries.chosen).toBe(new Date((position?.expiry_sec ?? 0) * 1000).toISOString())
    expect(expiries.candidates.length).toBeGreaterThan(1)
    expect(expiries.candidates.some((c) => !c.inWindow && c.tenorHours < profile.minTenorHours)).toBe(true)
    expect(expiries.candidates.find((c) => c.expiry === expiries.chosen)?.inWindow).toBe(true)
    const strikes = rows[2]?.facts.strikes as StrikeFacts
    expect(strikes.chosen).toBe(position?.instrument)
    expect(strikes.side).toBe('put')
    expect(strikes.candidates.length).toBeGreaterThan(1)
    const chosen = strikes.candidates.find((c) => c.instrument === strikes.chosen)
    expect(chosen).toMatchObject({ excluded: null })
    expect(Number(chosen?.mark)).toBeGreaterThan(0)
    expect(chosen?.annualisedYieldBps).toBeGreaterThanOrEqual(profile.minAnnualisedYieldBps)
    expect(rows.every((d) => d.position_id === leg.id)).toBe(true)

    // each new decision was published with its user, in order, with its message
    await until(
      async () => publishedFor(userId).length === 3,
      'three decisions published',
      async () => {},
    )
    const messages = publishedFor(userId)
    expect(messages.map((m) => [m.wheelId, m.decision.kind])).toEqual([
      [wheelId, 'waiting'],
      [wheelId, 'expiry_chosen'],
      [wheelId, 'strike_chosen'],
    ])
    expect(messages[2]?.decision.message).toMatch(/^Put strike \d+ chosen \(ETH-/)
  })

  it('after 20:00 UTC the skip is recorded once over several runs; the next morning the leg opens', async () => {
    const userId = randomUUID()
    await creditDeposit(sql(), userId, USDC(10_000), { at: new Date(sim.control.nowMs()) })
    const { wheelId, leg } = await startWheel(sql(), { userId, asset: 'BTC', amount: USDC(5_000) })
    for (let i = 0; i < 8 && (await legState(leg.id)) !== 'requested'; i++)
      await runFunding({ ...deps, redis, log: silent })
    // the leg ends without a sale before it is placed: the collateral is back in the subaccount,
    // unclaimed (a leg the user cancels stops the wheel instead: apps/api/test/wheel-leg-cancel.test.ts)
    await sql()`update positions set state = 'cancelled', reason = 'nothing sold' where id = ${leg.id}`
    const now = new Date(sim.control.nowMs())
    const evening = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), 20, 30)
    sim.control.advanceTo(evening)
    for (let i = 0; i < 3; i++) {
      expect((await runWheels(wheel)).steps).toMatchObject({ skipped: 1 })
      sim.control.advance(2 * MIN)
    }
    expect((await decisions(wheelId)).map((d) => [d.kind, d.reason])).toEqual([['skipped', 'deadline_passed']])
    sim.control.advanceTo(evening + 13 * 60 * MIN) // 09:30 the next day
    expect((await runWheels(wheel)).steps).toMatchObject({ put_opened: 1 })
    const rows = await decisions(wheelId)
    expect(rows.map((d) => [d.kind, d.reason])).toEqual([
      ['skipped', 'deadline_passed'],
      ['leg_opened', 'holding_cash'],
    ])
    expect(rows[1]?.facts).toEqual({ leg: { side: 'put', amount: '5000', currency: 'USDC' } })
  })
})
