/**
 * A wheel over several simulated days for two users, against the Derive
 * simulator over real HTTP, a real anvil with the local swap venue (TestUSDC, TestWETH, the
 * constant-product pool), a real Postgres and Redis, with the simulator's clock:
 *
 *   day 1  a put expires out of the money: the premium stays, the next put opens;
 *   day 2  the index falls through the strike inside PRE_CONVERT_LEAD_MINUTES: a conversion round
 *          buys the underlying before 08:00 (withdraw, swap on the pool, deposit), the put settles
 *          in the money, the next leg is a call not below the cost basis the round left;
 *   day 3  the index rises through the call's strike: the round sells the underlying before
 *          expiry, the call settles in the money (called away), the next leg is a put;
 *   day 4  the put only ends in the money at 08:00 (out of the money at the lead): the round runs
 *          after the settlement and the wheel sells a call again.
 *
 * At the end of every day the journal reconciles with the simulator for both users.
 */
import { randomUUID } from 'node:crypto'
import type { RunningSimulator } from '@wh/derive-simulator'
import { balanceOf, userSub } from '@wh/ledger'
import { strategyEventsOn } from '@wh/market'
import { EXCHANGE_CYCLE_LOCK, findFundingDivergences, reconcileSubaccount, runFunding } from '@wh/subaccounts'
import { type RunningChain, startChain } from '@wh/testkit'
import {
  type ConvertDeps,
  type DecisionFacts,
  type PlaceDeps,
  runConversion,
  runConversions,
  runPlacing,
  runWheels,
  startWheel,
  tradingProfile,
  type WheelDeps,
} from '@wh/trading'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildSwapStack, type SwapStack } from '../../../packages/swap/test/stack'
import { reconcileSources } from '../src/jobs/exchange/ticks'
import type { WorkerDeps } from '../src/ticks'
import {
  creditDeposit,
  type ExchangeStack,
  journalPlatformDeposits,
  silent,
  startExchangeStack,
} from './fixtures/exchange-stack'

const USDC = (n: number) => BigInt(n) * 1_000_000n
const MIN = 60_000
const START = Date.UTC(2026, 10, 23, 9, 0, 0) // a Monday, 09:00 UTC
const E18 = 10n ** 18n

describe('the wheel over several days, with conversions', () => {
  let stack: ExchangeStack
  let chain: RunningChain
  let swap: SwapStack
  let sim: RunningSimulator
  let deps: WorkerDeps
  let place: PlaceDeps
  let wheel: WheelDeps
  let convert: ConvertDeps
  const profile = tradingProfile('balanced')

  beforeAll(async () => {
    chain = await startChain({ chainId: 8453 })
    stack = await startExchangeStack({
      sim: { startMs: START },
      wallet: { USDC: '10000000', ETH: '1000' },
      env: {
        TRADING_PROFILE: 'balanced',
        PLATFORM_FEE_RATE: '0.1',
        WHEEL_ENABLED: 'true',
        RPC_URL_BASE: chain.rpcUrl,
      },
    })
    sim = stack.sim
    swap = await buildSwapStack({ config: stack.ctx.config, sql: stack.sql, rpcUrl: chain.rpcUrl, chainId: 8453 })
    const swapDeps = swap.deps()
    deps = {
      ...stack.deps,
      clients: swap.outbox.clients,
      registry: swap.outbox.registry,
      swap: { adapter: swapDeps.adapter, wallet: swap.swapWallet, chain: 'base' },
    }
    await setIndex('3000')
    const common = {
      sql: stack.sql,
      exchange: deps.exchange,
      redis: stack.redis,
      clock: deps.clock,
      strategyEvents: strategyEventsOn(stack.redis),
    }
    place = { ...common, platformFeeRate: '0.1', profile }
    wheel = { ...common, profile, enabled: true }
    convert = {
      ...deps,
      redis: stack.redis,
      log: silent,
      preConvertLeadMinutes: 10,
      stuckMinutes: 30,
      swapReceiptPollMs: 20,
    }
  }, 120_000)
  afterAll(async () => {
    await stack?.close()
    await chain?.stop()
  })

  const sql = () => stack.sql

  /** Sets the exchange's index and trades the pool to the same price (the swap's sanity guard compares them). */
  async function setIndex(price: string) {
    sim.control.setPrice('ETH', price)
    await swap.movePoolTo(BigInt(price))
  }

  interface Leg {
    id: string
    side: 'put' | 'call'
    state: string
    strike_e18: string
    expiry_sec: number
    outcome: string | null
    collateral_amount: string
  }
  const legOf = async (wheelId: string) =>
    (
      await sql()<Leg[]>`
        select p.id, p.side, p.state, p.strike_e18::text, p.expiry_sec::float8 as expiry_sec, p.outcome,
          p.collateral_amount::text
        from wheels w join positions p on p.id = w.current_position_id where w.id = ${wheelId}`
    )[0] as Leg
  const wheelOf = async (wheelId: string) =>
    (
      await sql()<
        {
          holding: string
          cost_basis_e18: string | null
          cycles: number
          reason: string | null
          exchange_id: string
          subaccount_id: string
          user_id: string
        }[]
      >`select w.holding, w.cost_basis_e18::text, w.cycles::int as cycles, w.reason, s.exchange_id::text, w.subaccount_id,
          w.user_id
        from wheels w join subaccounts s on s.id = w.subaccount_id where w.id = ${wheelId}`
    )[0]
  const roundOf = async (positionId: string) =>
    (
      await sql()<
        {
          state: string
          trigger: string
          direction: string
          amount_in: string
          amount_out: string | null
          reason: string | null
        }[]
      >`
        select state, trigger, direction, amount_in::text, amount_out::text, reason from conversions where position_id = ${positionId}`
    )[0]

  /** Funding, placing and the maker window until every wheel's leg is sold (open). */
  async function sellLegs(wheelIds: string[]) {
    for (let i = 0; i < 12; i++) {
      const states = await Promise.all(wheelIds.map(async (id) => (await legOf(id)).state))
      if (states.every((s) => s === 'open')) return
      await runFunding({ ...deps, redis: stack.redis, log: silent })
      await runPlacing(place)
      if (states.some((s) => s === 'placing')) sim.control.advance(profile.makerWindowMs / 4)
    }
    const legs = await Promise.all(wheelIds.map((id) => legOf(id)))
    const reasons = await sql()`select state, reason from positions where id = any(${legs.map((l) => l.id)}::uuid[])`
    throw new Error(`legs not sold: ${JSON.stringify(reasons)}`)
  }

  async function reconcileAll(wheelIds: string[]) {
    for (const id of wheelIds) {
      const w = await wheelOf(id)
      const nowMs = sim.control.nowMs()
      const rec = await reconcileSubaccount(
        { ...deps, redis: stack.redis },
        reconcileSources,
        {
          id: w?.subaccount_id as string,
          userId: w?.user_id as string,
          asset: 'ETH',
          exchangeId: Number(w?.exchange_id),
          ledgerId: w?.exchange_id as string,
          accruedToMs: null,
          stoppedAt: null,
        },
        { mode: 'enforce', epsilon: '0.01', nowMs, at: new Date(nowMs) },
        silent,
      )
      expect(
        rec.outcome,
        `wheel ${id} reconciles: ${JSON.stringify(rec, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))}`,
      ).toBe('clean')
      // and exactly, to the wei, for the ETH a conversion bought (the credit is rounded down to the
      // exchange's 12 decimals, the swap booking the same: creditedAmount)
      const atExchange = sim.engine.subaccounts.get(Number(w?.exchange_id))?.balances.get('ETH') ?? 0n
      const booked = await balanceOf(stack.sql, userSub(w?.user_id as string, w?.exchange_id as string, 'ETH'), 'ETH')
      expect(booked, `wheel ${id}: ETH in the journal and at the exchange`).toBe(atExchange)
    }
  }

  /** Runs the convert tick until every round of these legs is done (each run moves each round as far as it can). */
  async function convertUntilDone(positionIds: string[]) {
    for (let i = 0; i < 6; i++) {
      await runConversions(convert)
      const rounds = await Promise.all(positionIds.map(roundOf))
      if (rounds.every((r) => r?.state === 'done')) return rounds
    }
    throw new Error(`rounds not done: ${JSON.stringify(await Promise.all(positionIds.map(roundOf)))}`)
  }

  it('put out of the money, put in the money (converted before expiry), call called away, put converted after settlement', async () => {
    const wheelIds: string[] = []
    for (let u = 0; u < 2; u++) {
      const userId = randomUUID()
      await creditDeposit(sql(), userId, USDC(20_000), { at: new Date(sim.control.nowMs()) })
      const { wheelId } = await startWheel(sql(), { userId, asset: 'ETH', amount: USDC(6_000 + u * 1_000) })
      wheelIds.push(wheelId)
    }

    // ── day 1: the put expires out of the money ──
    await sellLegs(wheelIds)
    const day1 = await Promise.all(wheelIds.map(legOf))
    expect(day1.map((l) => l.side)).toEqual(['put', 'put'])
    const expiry1 = day1[0]?.expiry_sec as number
    sim.control.advanceTo((expiry1 - 5 * 60) * 1000) // inside the lead, out of the money: no round
    expect((await runConversions(convert)).planned).toBe(0)
    sim.control.advanceTo((expiry1 + 60) * 1000)
    await runPlacing(place)
    for (const id of wheelIds) expect(await legOf(id)).toMatchObject({ state: 'settled', outcome: 'otm' })
    expect((await runWheels(wheel)).steps).toEqual({ put_opened: 2 })
    await reconcileAll(wheelIds)

    // ── day 2: the index falls through the strike 10 minutes before expiry ──
    await sellLegs(wheelIds)
    const day2 = await Promise.all(wheelIds.map(legOf))
    const expiry2 = day2[0]?.expiry_sec as number
    const strike2 = BigInt(day2[0]?.strike_e18 as string)
    sim.control.advanceTo((expiry2 - 11 * 60) * 1000)
    await setIndex(String((strike2 * 95n) / 100n / E18)) // 5 % under the strike
    expect((await runConversions(convert)).planned).toBe(0) // 11 minutes out: not yet
    sim.control.advanceTo((expiry2 - 9 * 60) * 1000)
    const rounds2 = await convertUntilDone(day2.map((l) => l.id))
    expect(rounds2.map((r) => [r?.trigger, r?.direction])).toEqual([
      ['pre_expiry', 'to_underlying'],
      ['pre_expiry', 'to_underlying'],
    ])
    // the wheel waits while the leg is live, then the settlement, then the call
    sim.control.advanceTo((expiry2 + 60) * 1000)
    await runPlacing(place)
    for (const id of wheelIds) expect(await legOf(id)).toMatchObject({ state: 'settled', outcome: 'itm' })
    await reconcileAll(wheelIds)
    expect((await runWheels(wheel)).steps).toEqual({ call_opened: 2 })
    for (const [i, id] of wheelIds.entries()) {
      const w = await wheelOf(id)
      expect(w?.holding).toBe('underlying')
      // the cost basis: never below the put's strike
      expect(BigInt(w?.cost_basis_e18 ?? '0')).toBeGreaterThanOrEqual(BigInt(day2[i]?.strike_e18 as string))
      // the call sells what the round bought (the swap's output, exactly)
      const leg = await legOf(id)
      const round = rounds2[i]
      expect(leg.side).toBe('call')
      expect(leg.collateral_amount).toBe(round?.amount_out)
    }
    // one swap_executed per round; every swap transaction mined (executed, or a ladder step that
    // reverted on chain when the two rounds' swaps met in the pool on a slow machine) has its gas
    const [swaps = { executed: 0, reverted: 0, gas: -1 }] = await sql()<
      { executed: number; reverted: number; gas: number }[]
    >`
      select count(*) filter (where type = 'swap_executed')::int as executed,
        count(*) filter (where type = 'swap_reverted')::int as reverted,
        count(*) filter (where type = 'gas_spent' and payload->>'userId' is not null)::int as gas
      from ledger_events where user_id = any(${await Promise.all(wheelIds.map(async (id) => (await wheelOf(id))?.user_id as string))}::uuid[])`
    expect(swaps.executed).toBe(2)
    expect(swaps.gas).toBe(swaps.executed + swaps.reverted)

    // ── day 3: the call is called away ──
    // at 95 % of the put's strike no call at or above the cost basis is near the target delta: the
    // leg waits, saying so; the index recovers to the strike and it sells
    await runFunding({ ...deps, redis: stack.redis, log: silent })
    await runPlacing(place)
    expect(
      (await sql()`select reason from positions where id = ${(await legOf(wheelIds[0] as string)).id}`)[0]?.reason,
    ).toBe('no strike near the target delta')
    await setIndex(String(strike2 / E18))
    await sellLegs(wheelIds)
    const day3 = await Promise.all(wheelIds.map(legOf))
    for (const [i, leg] of day3.entries())
      expect(BigInt(leg.strike_e18)).toBeGreaterThanOrEqual(
        BigInt((await wheelOf(wheelIds[i] as string))?.cost_basis_e18 ?? '0'),
      )
    const expiry3 = day3[0]?.expiry_sec as number
    const strike3 = BigInt(day3[0]?.strike_e18 as string)
    sim.control.advanceTo((expiry3 - 9 * 60) * 1000)
    await setIndex(String((strike3 * 105n) / 100n / E18))
    const rounds3 = await convertUntilDone(day3.map((l) => l.id))
    expect(rounds3.map((r) => r?.direction)).toEqual(['to_cash', 'to_cash'])
    sim.control.advanceTo((expiry3 + 60) * 1000)
    await runPlacing(place)
    for (const id of wheelIds) expect(await legOf(id)).toMatchObject({ state: 'settled', outcome: 'itm' })
    await reconcileAll(wheelIds)
    expect((await runWheels(wheel)).steps).toEqual({ put_opened: 2 })
    for (const id of wheelIds) expect(await wheelOf(id)).toMatchObject({ holding: 'cash', cost_basis_e18: null })

    // ── day 4: in the money only at 08:00; the round runs after the settlement ──
    await sellLegs(wheelIds)
    const day4 = await Promise.all(wheelIds.map(legOf))
    const expiry4 = day4[0]?.expiry_sec as number
    const strike4 = BigInt(day4[0]?.strike_e18 as string)
    sim.control.advanceTo((expiry4 - 9 * 60) * 1000)
    expect((await runConversions(convert)).planned).toBe(0) // still out of the money
    await setIndex(String((strike4 * 96n) / 100n / E18))
    sim.control.advanceTo((expiry4 + 60) * 1000)
    await runPlacing(place)
    for (const id of wheelIds) expect(await legOf(id)).toMatchObject({ state: 'settled', outcome: 'itm' })
    // the runner waits for the round rather than selling another put with the cash
    expect((await runWheels(wheel)).steps).toEqual({ converting: 2 })
    const rounds4 = await convertUntilDone(day4.map((l) => l.id))
    expect(rounds4.map((r) => r?.trigger)).toEqual(['after_settlement', 'after_settlement'])
    await reconcileAll(wheelIds)
    sim.control.advance(2 * MIN)
    expect((await runWheels(wheel)).steps).toEqual({ call_opened: 2 })

    // the wheel's decision log tells the same four days (docs/trading.md "Why: the decision log")
    const log = await sql()<{ kind: string; reason: string; facts: DecisionFacts }[]>`
      select kind, reason, facts from wheel_decisions where wheel_id = ${wheelIds[0] as string} order by seq`
    expect(log.filter((d) => ['leg_opened', 'conversion'].includes(d.kind)).map((d) => d.reason)).toEqual([
      'holding_cash',
      'in_the_money_before_expiry',
      'conversion_done',
      'holding_underlying',
      'in_the_money_before_expiry',
      'conversion_done',
      'holding_cash',
      'settled_in_the_money',
      'conversion_done',
      'holding_underlying',
    ])
    const [toUnderlying] = log.filter((d) => d.reason === 'conversion_done')
    expect(toUnderlying?.facts.conversion).toMatchObject({ direction: 'to_underlying', trigger: 'pre_expiry' })
    const basis = toUnderlying?.facts.conversion?.costBasis ?? '0'
    expect(BigInt(basis.split('.')[0] as string)).toBeGreaterThanOrEqual(strike2 / E18)
    // day 3's call waited with its candidates, none at or above the cost basis near the target delta
    const callWait = log.find((d) => d.kind === 'waiting' && d.facts.strikes?.side === 'call')
    expect(['no_strike_within_tolerance', 'index_below_cost_basis']).toContain(callWait?.reason)
    expect(callWait?.facts.strikes?.minStrike).toBe(basis)
    const candidates = callWait?.facts.strikes?.candidates ?? []
    expect(candidates.length).toBeGreaterThan(1)
    for (const c of candidates) if (c.excluded === null) throw new Error(`${c.instrument} was eligible`)
    expect(log.filter((d) => d.reason === 'awaiting_conversion')).toHaveLength(1)
    expect(log.filter((d) => d.kind === 'strike_chosen')).toHaveLength(4)

    // nothing ran twice: a last tick of everything records nothing new
    const count = async () => (await sql()<{ n: number }[]>`select count(*)::int as n from ledger_events`)[0]?.n
    const before = await count()
    await runConversions(convert)
    await runPlacing(place)
    expect(await count()).toBe(before)

    // the funding subaccount after days of fundings and conversions (bought ETH deposited from it, sold cash
    // withdrawn into it): everything explained by the journal and the movements, its interest included
    await journalPlatformDeposits(sql(), { USDC: '10000000', ETH: '1000' }, new Date(sim.control.nowMs()))
    const fundingId = deps.config.exchange.fundingSubaccountId as number
    const opts = { epsilon: '0.0001', nowMs: sim.control.nowMs() }
    expect(
      await findFundingDivergences({ ...deps, redis: stack.redis }, reconcileSources, fundingId, opts, silent),
    ).toEqual([])
  }, 180_000)

  /** New users' wheels with their put sold and the index under its strike inside the lead. */
  async function putsInTheMoneyBeforeExpiry(n: number): Promise<{ wheelIds: string[]; legs: Leg[] }> {
    await setIndex('3000')
    const wheelIds: string[] = []
    for (let u = 0; u < n; u++) {
      const userId = randomUUID()
      await creditDeposit(sql(), userId, USDC(10_000), { at: new Date(sim.control.nowMs()) })
      wheelIds.push((await startWheel(sql(), { userId, asset: 'ETH', amount: USDC(5_000) })).wheelId)
    }
    await sellLegs(wheelIds)
    const legs = await Promise.all(wheelIds.map(legOf))
    const expiry = legs[0]?.expiry_sec as number
    sim.control.advanceTo((expiry - 9 * 60) * 1000)
    await setIndex(String((BigInt(legs[0]?.strike_e18 as string) * 95n) / 100n / E18))
    return { wheelIds, legs }
  }

  it('a worker that died after storing a round deposit: the restart finds it landed and deposits once', async () => {
    const { legs } = await putsInTheMoneyBeforeExpiry(1)
    const leg = legs[0] as Leg
    let stored: { method: string; params: unknown } | undefined
    const crashing: ConvertDeps = {
      ...convert,
      hooks: {
        afterStored: async (row) => {
          if (row.kind !== 'convert_in' || stored) return
          stored = { method: row.method as string, params: row.params }
          throw new Error('worker killed after storing the deposit')
        },
      },
    }
    await runConversions(crashing)
    expect((await roundOf(leg.id))?.state).toBe('depositing')
    // the dead process had sent it before dying
    await deps.exchange.sendSigned(stored as Parameters<typeof deps.exchange.sendSigned>[0])
    // the thrown error backed the round off: a job for this one round leaves it to its time
    const [{ id: roundId } = { id: '' }] = await sql()<{ id: string }[]>`
      select id from conversions where position_id = ${leg.id}`
    expect(await runConversion(convert, roundId)).toBeUndefined()
    // a process that really died recorded nothing: due now
    await sql()`update conversions set next_attempt_at = now() where position_id = ${leg.id}`
    // while another process holds the cycle lock, a job for the round leaves it; then moves it by its id
    await stack.redis.set(EXCHANGE_CYCLE_LOCK, 'another-process', 'PX', 60_000)
    expect(await runConversion(convert, roundId)).toBe('locked')
    expect((await roundOf(leg.id))?.state).toBe('depositing')
    await stack.redis.del(EXCHANGE_CYCLE_LOCK)
    expect(await runConversion(convert, roundId)).toMatch(/^(withdrawing|done)$/)
    expect((await roundOf(leg.id))?.state).toMatch(/^(withdrawing|done)$/)
    const [round] = await convertUntilDone([leg.id])
    const [sub] = await sql()<{ exchange_id: string }[]>`
      select s.exchange_id::text from positions p join subaccounts s on s.id = p.subaccount_id where p.id = ${leg.id}`
    const { events } = await deps.exchange.getDepositHistory({ subaccount_id: Number(sub?.exchange_id) })
    const ethDeposits = events.filter((e) => e.asset === 'ETH')
    expect(ethDeposits).toHaveLength(1)
    const [rows] = await sql()<{ n: number; done: number }[]>`
      select count(*)::int as n, count(*) filter (where state = 'done')::int as done from subaccount_transfers
      where subaccount_id = (select subaccount_id from positions where id = ${leg.id}) and kind = 'convert_in'`
    expect(rows).toEqual({ n: 1, done: 1 })
    expect(round?.amount_out).toBeTruthy()
  }, 120_000)

  it('below the round gas floor a round waits with the reason, alerts once when stuck, then completes', async () => {
    const { legs } = await putsInTheMoneyBeforeExpiry(1)
    const leg = legs[0] as Leg
    const poor = privateKeyToAccount(generatePrivateKey())
    const starved: ConvertDeps = { ...convert, swap: { ...convert.swap, wallet: poor } }
    await runConversions(starved)
    const waiting = await roundOf(leg.id)
    expect(waiting?.state).toBe('planned')
    expect(waiting?.reason).toMatch(/below the round floor/)
    const alertsBefore = stack.alerts.filter((a) => a.text === 'conversion round stuck').length
    sim.control.advance(31 * MIN)
    await runConversions(starved)
    await runConversions(starved)
    expect(stack.alerts.filter((a) => a.text === 'conversion round stuck').length).toBe(alertsBefore + 1)
    // nothing moved while it waited: no swap, no movement
    const [moved] = await sql()<{ n: number }[]>`
      select count(*)::int as n from subaccount_transfers
      where subaccount_id = (select subaccount_id from positions where id = ${leg.id}) and kind like 'convert%'`
    expect(moved?.n).toBe(0)
    // the funded wallet: the round runs (the leg has settled meanwhile: the index is under its strike)
    await convertUntilDone([leg.id])
  }, 120_000)
})
