import type { RunningSimulator } from '@wh/derive-simulator'
import { toE18 } from '@wh/exchange'
import { runFunding } from '@wh/subaccounts'
import {
  chooseStrike,
  type OptionQuote,
  type PlaceDeps,
  resumeWheel,
  runPlacing,
  runWheels,
  startWheel,
  stopWheel,
  tradingProfile,
  updateWheelSettings,
  type WheelDeps,
} from '@wh/trading'
import type { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
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
const E18 = 10n ** 18n
const START = Date.UTC(2026, 10, 23, 9, 0, 0) // a Monday, 09:00 UTC

interface Leg {
  state: string
  instrument: string | null
  strike_e18: string | null
  expiry_sec: number | null
  leg_settings: Record<string, unknown> | null
  reason: string | null
}

describe('wheel settings against the simulator', () => {
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
  const leg = async (id: string) =>
    (
      await sql()<Leg[]>`
        select state, instrument, strike_e18::text, expiry_sec::float8 as expiry_sec, leg_settings, reason
        from positions where id = ${id}`
    )[0] as Leg
  const currentLeg = async (wheelId: string) =>
    (await sql()<{ id: string }[]>`select current_position_id as id from wheels where id = ${wheelId}`)[0]?.id ?? ''
  const wheelState = async (wheelId: string) =>
    (await sql()<{ state: string; reason: string | null }[]>`select state, reason from wheels where id = ${wheelId}`)[0]
  async function until(id: string, wanted: string) {
    for (let i = 0; i < 8; i++) {
      if ((await leg(id)).state === wanted) return
      await runFunding({ ...deps, redis, log: silent })
      await runPlacing(place)
    }
    throw new Error(`leg ${id} never reached ${wanted} (${JSON.stringify(await leg(id))})`)
  }
  /** the puts of one expiry as the placing tick reads them */
  async function putQuotes(expirySec: number): Promise<OptionQuote[]> {
    const all = await deps.exchange.getInstruments({ currency: 'ETH', instrument_type: 'option' })
    const quotes: OptionQuote[] = []
    for (const i of all.filter((i) => i.option_details?.expiry === expirySec && i.option_details.option_type === 'P')) {
      const t = await deps.exchange.getTicker(i.instrument_name)
      if (!t.option_pricing) continue
      quotes.push({
        instrument: i.instrument_name,
        expirySec,
        strikeE18: toE18(i.option_details?.strike ?? '0'),
        type: 'P',
        deltaBps: Math.round(Number(t.option_pricing.delta) * 10_000),
        markE18: toE18(t.mark_price),
      })
    }
    return quotes
  }
  /** sells the leg, lets it expire out of the money (the index moved away), and settles it */
  async function sellAndExpire(id: string, away: string, back: string) {
    await until(id, 'placing')
    await runPlacing(place)
    sim.control.advance(profile.makerWindowMs + MIN)
    await runPlacing(place)
    expect((await leg(id)).state).toBe('open')
    sim.control.setPrice('ETH', away)
    sim.control.advanceTo(((await leg(id)).expiry_sec ?? 0) * 1000 + MIN)
    await runPlacing(place)
    expect((await leg(id)).state).toBe('settled')
    sim.control.setPrice('ETH', back)
  }

  it('picks by distance from the index; at expiry "settle" stops the wheel; resume opens the next leg', async () => {
    const userId = await userWith(USDC(10_000))
    const { wheelId, leg: first } = await startWheel(
      sql(),
      { userId, asset: 'ETH', amount: USDC(5_000) },
      { input: { strikeBy: 'otm', otmBps: 500, atExpiry: 'settle' }, profile },
    )
    await until(first.id, 'placing')
    const chosen = await leg(first.id)
    expect(chosen.leg_settings).toMatchObject({ strikeBy: 'otm', otmBps: 500 })
    // 5 % under 3000 is 2850: the grid's nearest strikes are 2800 and 2900
    const strike = BigInt(chosen.strike_e18 ?? '0')
    expect(strike).toBeGreaterThanOrEqual(2800n * E18)
    expect(strike).toBeLessThanOrEqual(2900n * E18)

    await sellAndExpire(first.id, '3300', '3000')
    expect((await runWheels(wheel)).steps).toEqual({ settled_stopped: 1 })
    expect(await wheelState(wheelId)).toMatchObject({ state: 'stopped' })
    expect((await runWheels(wheel)).steps).toEqual({})

    await resumeWheel(sql(), userId, wheelId)
    expect(await wheelState(wheelId)).toMatchObject({ state: 'running', reason: null })
    expect((await runWheels(wheel)).steps).toEqual({ put_opened: 1 })
    const second = await leg(await currentLeg(wheelId))
    expect(second.state).toBe('requested')
    // stopped again now, so the next test's runs see only its own wheel
    await stopWheel(sql(), userId, wheelId, 'now', new Date(sim.control.nowMs()))
    expect((await runWheels(wheel)).steps).toEqual({ stopped: 1 })
  })

  it('a changed target delta leaves the chosen leg alone and picks another strike on the next leg', async () => {
    const userId = await userWith(USDC(10_000))
    const { wheelId, leg: first } = await startWheel(sql(), { userId, asset: 'ETH', amount: USDC(5_000) })
    await until(first.id, 'placing')
    const chosen = await leg(first.id)
    expect(chosen.leg_settings).toEqual({ strikeBy: 'delta', targetDeltaBps: 2000, minTenorHours: 40, maxTenorDays: 8 })

    // a 0.10 put is further out of the money than the profile's 0.20
    const s = await updateWheelSettings(sql(), userId, wheelId, { putTargetDeltaBps: 1000 }, profile)
    expect(s).toMatchObject({ strikeBy: 'delta', putTargetDeltaBps: 1000, callTargetDeltaBps: 2000 })
    await runPlacing(place)
    expect(await leg(first.id)).toMatchObject({ instrument: chosen.instrument, strike_e18: chosen.strike_e18 })

    await sellAndExpire(first.id, '3400', '3000')
    expect((await runWheels(wheel)).steps).toEqual({ put_opened: 1 })
    const second = await currentLeg(wheelId)
    await until(second, 'placing')
    const next = await leg(second)
    expect(next.leg_settings).toMatchObject({ strikeBy: 'delta', targetDeltaBps: 1000 })
    // the same market read by the profile's 0.20 picks another strike: the 0.10 one is further out
    const quotes = await putQuotes(next.expiry_sec ?? 0)
    const byProfile = chooseStrike(quotes, 'put', profile)
    expect(chooseStrike(quotes, 'put', { ...profile, putTargetDeltaBps: 1000 })?.instrument).toBe(next.instrument)
    expect(byProfile?.instrument).toBeDefined()
    expect(BigInt(next.strike_e18 ?? '0')).toBeLessThan(byProfile?.strikeE18 ?? 0n)
  })
})
