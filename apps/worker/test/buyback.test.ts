/**
 * Buying a leg back (docs/trading.md "Buying a leg back") against the Derive simulator over real
 * HTTP, a real Postgres and Redis: DELETE of an open leg (closePosition) quotes it and moves it to
 * closing; the placing tick buys it back with one immediate-or-cancel order and closes it, recorded
 * as one `option_sold` buy; a refusal (margin on a covered call) and an ask above the limit return
 * the leg to open with the reason; a worker dying right after sending buys once; a leg bought back in
 * part settles at expiry for what is still short; the journal agrees with the exchange throughout.
 */
import { randomUUID } from 'node:crypto'
import type { RunningSimulator } from '@wh/derive-simulator'
import { fromE18, toE18 } from '@wh/exchange'
import { balanceOf, userExpense, userSub } from '@wh/ledger'
import { reconcileSubaccount, runFunding } from '@wh/subaccounts'
import {
  BUYBACK_PENDING,
  closePosition,
  type PlaceDeps,
  type PriceReader,
  requestPosition,
  runPlacing,
  tradingProfile,
} from '@wh/trading'
import type { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { reconcileSources } from '../src/jobs/exchange/ticks'
import type { WorkerDeps } from '../src/ticks'
import { creditDeposit, type ExchangeStack, silent, startExchangeStack, tradingDepsOf } from './fixtures/exchange-stack'

const USDC = (n: number) => BigInt(n) * 1_000_000n
const E18 = 10n ** 18n
// a Monday 09:00 UTC: the balanced profile's first expiry is Wednesday 08:00
const START = Date.UTC(2026, 10, 23, 9, 0, 0)

interface Leg {
  state: string
  instrument: string
  filled_e18: string
  bought_e18: string
  close_cost: string
  close_limit_e18: string | null
  fees: string
  reason: string | null
  order_id: string | null
  settlement_cost: string | null
  expiry_sec: number
  exchange_id: string
  subaccount_id: string
  closed_at: Date | null
}

describe('buying a leg back against the simulator', () => {
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
      wallet: { USDC: '10000000', ETH: '100' },
    })
    ;({ sim, deps, redis } = stack)
    sim.control.setPrice('ETH', '3000')
    place = tradingDepsOf(stack, profile).place
  })
  afterAll(async () => stack?.close())

  const sql = () => stack.sql
  const now = () => new Date(sim.control.nowMs())
  /** the quote's price source: the exchange's ticker, as the API reads it */
  const prices: PriceReader = async (instrument) => {
    const t = await deps.exchange.getTicker(instrument)
    return { askE18: toE18(t.best_ask_price), markE18: toE18(t.mark_price), tickE18: toE18(t.tick_size) }
  }
  const leg = async (id: string) =>
    (
      await sql()<Leg[]>`
        select p.state, p.instrument, p.filled_e18::text, p.bought_e18::text, p.close_cost::text,
          p.close_limit_e18::text, p.fees::text, p.reason, p.order_id, p.settlement_cost::text,
          p.expiry_sec::float8 as expiry_sec, s.exchange_id::text, p.subaccount_id, p.closed_at
        from positions p join subaccounts s on s.id = p.subaccount_id where p.id = ${id}`
    )[0] as Leg
  const soldEvents = async (userId: string) =>
    sql()<{ id: string; idempotency_key: string; payload: { side?: string; premium: string; exchangeFee: string } }[]>`
      select id, idempotency_key, payload from ledger_events where user_id = ${userId} and type = 'option_sold'
      order by recorded_at, idempotency_key`
  const buys = async (userId: string) => (await soldEvents(userId)).filter((e) => e.payload.side === 'buy')
  const tradesOf = async (l: Leg, id: string, direction: 'buy' | 'sell') =>
    (await deps.exchange.getTradeHistory({ subaccount_id: Number(l.exchange_id) })).trades.filter(
      (t) => t.label === id && t.direction === direction,
    )
  const shortAt = async (l: Leg) =>
    (await deps.exchange.getSubaccount(Number(l.exchange_id))).positions.find((p) => p.instrument_name === l.instrument)
      ?.amount ?? '0'

  /** A sold leg: requested, funded, placed, the window ended and the rest crossed at the bid. */
  async function openLeg(side: 'put' | 'call', collateral: { currency: 'USDC' | 'ETH'; amount: bigint }) {
    const userId = randomUUID()
    await creditDeposit(sql(), userId, collateral.amount, { currency: collateral.currency, at: now() })
    const req = await requestPosition(sql(), { userId, asset: 'ETH', side, amount: collateral.amount })
    for (let i = 0; i < 8 && (await leg(req.id))?.state !== 'placing'; i++) {
      await runFunding({ ...deps, redis, log: silent })
      await runPlacing(place)
    }
    await runPlacing(place)
    sim.control.advance(profile.makerWindowMs)
    await runPlacing(place)
    const l = await leg(req.id)
    expect(l.state).toBe('open')
    expect(BigInt(l.filled_e18)).toBeGreaterThan(0n)
    return { userId, id: req.id, leg: l }
  }

  async function reconciled(userId: string, l: Leg) {
    const nowMs = sim.control.nowMs()
    const r = await reconcileSubaccount(
      { ...deps, redis },
      reconcileSources,
      {
        id: l.subaccount_id,
        userId,
        asset: 'ETH',
        exchangeId: Number(l.exchange_id),
        ledgerId: l.exchange_id,
        accruedToMs: null,
        stoppedAt: null,
      },
      { mode: 'enforce', epsilon: '0.01', nowMs, at: new Date(nowMs) },
      silent,
    )
    return r.outcome
  }

  it('DELETE of an open put quotes it; the tick buys it back once, closes it, records one buy; re-runs add nothing', async () => {
    sim.control.setPrice('ETH', '3000')
    const { userId, id, leg: sold } = await openLeg('put', { currency: 'USDC', amount: USDC(5_000) })
    const ticker = await deps.exchange.getTicker(sold.instrument)

    const closing = await closePosition(sql(), userId, id, prices, now())
    expect(closing).toMatchObject({ outcome: 'close_requested', state: 'closing' })
    expect(closing.quote.priceE18).toBe(toE18(ticker.best_ask_price))
    expect(closing.quote.limitE18).toBe((toE18(ticker.best_ask_price) * 102n) / 100n)
    expect(closing.quote.amountE18).toBe(BigInt(sold.filled_e18))
    expect(await leg(id)).toMatchObject({ state: 'closing', close_limit_e18: closing.quote.limitE18.toString() })
    // asked again while closing: the same answer, no new quote (a ticker that throws is never read)
    const again = await closePosition(
      sql(),
      userId,
      id,
      async () => {
        throw new Error('must not be read')
      },
      now(),
    )
    expect(again).toEqual(closing)

    const summary = await runPlacing(place)
    expect(summary.steps.closed).toBe(1)
    const closed = await leg(id)
    expect(closed).toMatchObject({ state: 'closed', bought_e18: sold.filled_e18, reason: null, order_id: null })
    expect(closed.closed_at).not.toBeNull()
    expect(await shortAt(closed)).toBe('0')
    const bought = await tradesOf(closed, id, 'buy')
    expect(bought).toHaveLength(1)
    expect(toE18(bought[0]?.trade_amount ?? '0')).toBe(BigInt(sold.filled_e18))

    // one option_sold buy, keyed by the trade id: price × amount rounded up to the settlement
    // expense, the exchange fee to its expense, no platform fee
    const [ev] = await buys(userId)
    expect(await buys(userId)).toHaveLength(1)
    expect(ev?.idempotency_key).toBe(bought[0]?.trade_id)
    const cost =
      (toE18(bought[0]?.trade_price ?? '0') * toE18(bought[0]?.trade_amount ?? '0') + 10n ** 30n - 1n) / 10n ** 30n
    expect(BigInt(ev?.payload.premium ?? '0')).toBe(cost)
    expect(closed.close_cost).toBe(cost.toString())
    const postings = await sql()<{ account: string; amount: string }[]>`
      select account, amount::text from ledger_postings where event_id = ${ev?.id ?? ''} order by account`
    const fee = BigInt(ev?.payload.exchangeFee ?? '0')
    expect(fee).toBeGreaterThan(0n)
    expect(postings).toEqual(
      [
        { account: userSub(userId, closed.exchange_id, 'USDC'), amount: (-(cost + fee)).toString() },
        { account: userExpense(userId, 'settlement'), amount: cost.toString() },
        { account: userExpense(userId, 'exchange_fee'), amount: fee.toString() },
      ].sort((a, b) => (a.account < b.account ? -1 : 1)),
    )
    expect(await balanceOf(sql(), userExpense(userId, 'settlement'), 'USDC')).toBe(cost)

    const events = (await soldEvents(userId)).length
    await runPlacing(place)
    await runPlacing(place)
    expect((await soldEvents(userId)).length).toBe(events)
    expect(await tradesOf(closed, id, 'buy')).toHaveLength(1)
    expect(await reconciled(userId, closed)).toBe('clean')
  })

  it('a covered call whose subaccount lacks the USDC is refused for margin and returns to open with the reason', async () => {
    sim.control.setPrice('ETH', '3000')
    const { userId, id, leg: sold } = await openLeg('call', { currency: 'ETH', amount: E18 })
    await closePosition(sql(), userId, id, prices, now())
    const r = await runPlacing(place)
    expect(r.steps.close_refused).toBe(1)
    const back = await leg(id)
    expect(back).toMatchObject({ state: 'open', bought_e18: '0', order_id: null })
    expect(back.reason).toMatch(/refused the buy-back for margin/)
    expect(await tradesOf(back, id, 'buy')).toHaveLength(0)
    expect(toE18(await shortAt(back))).toBe(-BigInt(sold.filled_e18))
    // the leg runs on: the next ticks leave it open; the user may ask again for a new quote
    await runPlacing(place)
    expect((await leg(id)).state).toBe('open')
    expect(await buys(userId)).toHaveLength(0)
  })

  it('an ask above the limit buys nothing: back to open with the reason; a second DELETE re-quotes and closes', async () => {
    sim.control.setPrice('ETH', '3000')
    const { userId, id } = await openLeg('put', { currency: 'USDC', amount: USDC(5_000) })
    const first = await closePosition(sql(), userId, id, prices, now())
    // the index falls before the tick: the put's ask rises above the quote's limit
    sim.control.setPrice('ETH', '2700')
    expect((await runPlacing(place)).steps.close_refused).toBe(1)
    const back = await leg(id)
    expect(back).toMatchObject({ state: 'open', bought_e18: '0' })
    expect(back.reason).toMatch(/no ask at or below the limit/)
    expect(await buys(userId)).toHaveLength(0)

    const second = await closePosition(sql(), userId, id, prices, now())
    expect(second.quote.priceE18).toBeGreaterThan(first.quote.limitE18)
    await runPlacing(place)
    expect(await leg(id)).toMatchObject({ state: 'closed' })
    expect(await buys(userId)).toHaveLength(1)
  })

  it('a worker dying right after sending the buy-back buys once: the next run ingests the fill and closes', async () => {
    sim.control.setPrice('ETH', '3000')
    const { userId, id, leg: sold } = await openLeg('put', { currency: 'USDC', amount: USDC(4_000) })
    await closePosition(sql(), userId, id, prices, now())
    // the step sends the IOC, then "dies": nothing of the exchange's answer is stored or ingested
    const crashed = await runPlacing({
      ...place,
      hooks: {
        afterBuyBackSent: async () => {
          throw new Error('killed after sending')
        },
      },
    })
    expect(crashed.steps.error).toBe(1)
    const mid = await leg(id)
    expect(mid).toMatchObject({ state: 'closing', order_id: BUYBACK_PENDING, bought_e18: '0' })
    expect(await tradesOf(mid, id, 'buy')).toHaveLength(1) // the exchange did fill it
    expect(await buys(userId)).toHaveLength(0)

    // the restarted tick: fills first, then the step sees nothing left to buy
    await runPlacing(place)
    await runPlacing(place)
    const closed = await leg(id)
    expect(closed).toMatchObject({ state: 'closed', bought_e18: sold.filled_e18 })
    expect(await tradesOf(closed, id, 'buy')).toHaveLength(1)
    expect(await buys(userId)).toHaveLength(1)
    expect(await shortAt(closed)).toBe('0')
    expect(await reconciled(userId, closed)).toBe('clean')
  })

  it('a leg bought back in part settles at expiry for what is still short, and the journal agrees', async () => {
    sim.control.setPrice('ETH', '3000')
    const { userId, id, leg: sold } = await openLeg('put', { currency: 'USDC', amount: USDC(6_000) })
    const filled = BigInt(sold.filled_e18)
    // a buy-back that met a thin book: half of the leg bought, labelled with the position
    const half = (filled / 2n / (E18 / 10n)) * (E18 / 10n)
    const t = await deps.exchange.getTicker(sold.instrument)
    await deps.exchange.order({
      subaccount_id: Number(sold.exchange_id),
      instrument_name: sold.instrument,
      direction: 'buy',
      amount: fromE18(half),
      limit_price: t.best_ask_price,
      max_fee: '100',
      time_in_force: 'ioc',
      label: id,
    })
    await runPlacing(place)
    const part = await leg(id)
    expect(part).toMatchObject({ state: 'open', bought_e18: half.toString() })
    expect(await buys(userId)).toHaveLength(1)

    // expiry deep in the money: the exchange settles the short rest only
    sim.control.setPrice('ETH', '2000')
    sim.control.advanceTo((part.expiry_sec + 60) * 1000)
    await runPlacing(place)
    const settled = await leg(id)
    expect(settled.state).toBe('settled')
    const { settlements } = await deps.exchange.getOptionSettlementHistory(Number(sold.exchange_id))
    const s = settlements.find((x) => x.instrument_name === sold.instrument)
    const expected = -toE18(s?.option_settlement_pnl ?? '0')
    const strikeMinusIndex = toE18(sold.instrument.split('-')[2] ?? '0') - 2000n * E18
    expect(expected).toBe(((filled - half) * strikeMinusIndex) / E18)
    expect(BigInt(settled.settlement_cost ?? '0')).toBe((expected + 10n ** 12n - 1n) / 10n ** 12n)
    expect(await reconciled(userId, settled)).toBe('clean')
  })
})
