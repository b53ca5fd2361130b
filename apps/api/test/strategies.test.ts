/**
 * GET /:asset/strategies and the chart's overlays against data the real placing tick wrote on the
 * Derive simulator (a put sold through the maker window, then settled in the money: a losing
 * cycle), and against hand-built history with hand-computed statistics (BTC). Real Postgres and
 * Redis; the API is built by buildServer over the same database. Also the IV at sale (the mark IV a
 * leg records when it chooses its instrument) and the reuse of the Postgres part until an event.
 */
import { randomUUID } from 'node:crypto'
import type { RunningSimulator } from '@wh/derive-simulator'
import { fromE18 } from '@wh/exchange'
import {
  type Candle,
  marketNames,
  pctString,
  publishStrategyEvent,
  ratio,
  strategyEvents,
  strategyNames,
  upsertCandles,
} from '@wh/market'
import { runFunding } from '@wh/subaccounts'
import { markIvE18, type PlaceDeps, requestPosition, runPlacing, tradingProfile } from '@wh/trading'
import { buildChainRegistry, DepositKeyring } from '@wh/wallet'
import type { FastifyInstance } from 'fastify'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  creditDeposit,
  type ExchangeStack,
  silent,
  startExchangeStack,
} from '../../worker/test/fixtures/exchange-stack'
import { buildServer } from '../src/server'
import { inlineRefs } from './contract'
import { connect, fixedFees, type Msg, waitFor } from './market-support'

const MIN = 60_000
const DAY = 86_400_000
const E18 = 10n ** 18n
const USDC = (n: number) => BigInt(n) * 1_000_000n
// a Monday 09:00 UTC: the balanced profile's first expiry is Wednesday 08:00
const START = Date.UTC(2026, 10, 23, 9, 0, 0)
const iso = (ms: number) => new Date(ms).toISOString()

describe('GET /:asset/strategies and chart overlays', () => {
  let stack: ExchangeStack
  let sim: RunningSimulator
  let app: FastifyInstance
  let place: PlaceDeps
  const redises: Redis[] = []
  const apps: FastifyInstance[] = []
  const names = marketNames(`t-${randomUUID()}:`)
  const profile = tradingProfile('balanced')

  async function startApp(now: () => number, strategiesCacheMs = 0): Promise<FastifyInstance> {
    const redis = new Redis(stack.ctx.config.cacheUrl, { maxRetriesPerRequest: 1 })
    redises.push(redis)
    const a = await buildServer({
      config: stack.ctx.config,
      database: stack.ctx.database,
      redis,
      keyring: DepositKeyring.fromMnemonic(stack.ctx.config.keys.masterMnemonic).publicOnly(),
      chains: buildChainRegistry(stack.ctx.config),
      clock: { now: () => new Date(now()) },
      logger: false,
      marketData: { names, fees: fixedFees, strategiesCacheMs },
    })
    apps.push(a)
    return a
  }

  beforeAll(async () => {
    stack = await startExchangeStack({
      sim: { startMs: START },
      env: { TRADING_PROFILE: 'balanced', PLATFORM_FEE_RATE: '0.1' },
    })
    sim = stack.sim
    sim.control.setPrice('ETH', '3000')
    const pub = new Redis(stack.ctx.config.cacheUrl, { maxRetriesPerRequest: 1 })
    redises.push(pub)
    place = {
      sql: stack.sql,
      exchange: stack.deps.exchange,
      redis: stack.redis,
      clock: stack.deps.clock,
      platformFeeRate: '0.1',
      profile,
      strategyEvents: strategyEvents(pub, names),
    }
    app = await startApp(() => sim.control.nowMs())
    await app.listen({ host: '127.0.0.1', port: 0 })
  })
  afterAll(async () => {
    for (const a of apps) await a.close()
    for (const r of redises) r.disconnect()
    await stack?.close()
  })

  const get = (url: string, on = app) => on.inject({ method: 'GET', url })
  const position = async (id: string) =>
    (
      await stack.sql<
        {
          state: string
          instrument: string
          strike_e18: string
          filled_e18: string
          premium: string
          fees: string
          settlement_cost: string | null
          expiry_sec: number
          user_id: string
        }[]
      >`select state, instrument, strike_e18::text, filled_e18::text, premium::text, fees::text,
          settlement_cost::text, expiry_sec::float8 as expiry_sec, user_id from positions where id = ${id}`
    )[0]
  async function until(id: string, wanted: string) {
    for (let i = 0; i < 8; i++) {
      if ((await position(id))?.state === wanted) return
      await runFunding({ ...stack.deps, redis: stack.redis, log: silent })
      await runPlacing(place)
    }
    throw new Error(`position never reached ${wanted}`)
  }

  it('a put sold by the placing tick is the put strategy’s current cycle, then a losing settled cycle', async () => {
    const addr = app.server.address() as { port: number }
    const ws = await connect(`ws://127.0.0.1:${addr.port}/ws/strategies?assets=ETH`)
    await ws.next((m) => m.type === 'subscribed', 'ack')
    const userId = randomUUID()
    await creditDeposit(stack.sql, userId, USDC(10_000), { at: new Date(sim.control.nowMs()) })
    const req = await requestPosition(stack.sql, { userId, asset: 'ETH', side: 'put', amount: USDC(5_000) })
    await until(req.id, 'placing')
    // the IV at sale: what the placing step records where it chooses the instrument (the one line
    // placing/choose.ts takes: iv_e18 = markIvE18(the chosen ticker)), written here while that line is pending
    const chosen = await position(req.id)
    const ivE18 = markIvE18(await stack.deps.exchange.getTicker(chosen?.instrument as string))
    expect(ivE18).not.toBeNull()
    await stack.sql`update positions set iv_e18 = ${ivE18?.toString() ?? null} where id = ${req.id} and iv_e18 is null`
    const [{ iv_e18: storedIv } = { iv_e18: null }] = await stack.sql<{ iv_e18: string | null }[]>`
      select iv_e18::text from positions where id = ${req.id}`
    expect(storedIv).toBe(ivE18?.toString())
    const ivAtSale = fromE18(BigInt(storedIv as string))
    await runPlacing(place)
    sim.control.advance(MIN)
    await runPlacing(place)
    sim.control.advance(profile.makerWindowMs)
    await runPlacing(place)
    const open = await position(req.id)
    expect(open?.state).toBe('open')
    const strikeE18 = BigInt(open?.strike_e18 ?? '0')
    const filledE18 = BigInt(open?.filled_e18 ?? '0')
    const premium = BigInt(open?.premium ?? '0')

    const res = await get('/eth/strategies')
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(body).toMatchObject({ asset: 'ETH', profile: 'balanced' })
    expect(body.strategies.map((s: { id: string }) => s.id)).toEqual(['eth-wheel', 'eth-put', 'eth-call'])
    const put = body.strategies[1]
    expect(put.parameters).toMatchObject({
      profile: 'balanced',
      sells: ['put'],
      putTargetDelta: '0.2000',
      callTargetDelta: null,
      deltaTolerance: '0.0700',
      minTenorHours: 40,
      maxTenorDays: 8,
      minAnnualisedYieldPct: '5.00',
      makerWindowMinutes: 20,
      endOfWindow: 'cross',
      maxCrossBelowMarkPct: '5.00',
    })
    // sold at an average of premium / contracts; breakeven = strike − that premium
    const avgE18 = (premium * 10n ** 12n * E18) / filledE18
    const cur = put.currentCycle
    expect(cur).toMatchObject({
      status: 'open',
      side: 'put',
      instrument: open?.instrument,
      expiry: iso((open?.expiry_sec ?? 0) * 1000),
      premiumSource: 'sold',
      markSource: 'cycle-opened', // no price feed runs here: the quote cached when the strike was chosen
      indexPrice: null,
      distanceToStrikePct: null,
    })
    expect(cur.timeToExpirySeconds).toBe((open?.expiry_sec ?? 0) - Math.floor(sim.control.nowMs() / 1000))
    expect(toE18(cur.breakeven)).toBe(strikeE18 - avgE18)
    expect(cur.sold).toMatchObject({ legs: 1 })
    expect(cur.note).toMatch(/mark from when/)
    expect(put.history).toHaveLength(1)
    expect(put.history[0]).toMatchObject({ status: 'open', outcome: null, realisedReturnPct: null, ivAtSale })
    expect(ivAtSale).toMatch(/^0\.\d+$/)
    expect(put.statistics.sinceStart.strategy).toMatchObject({ settledCycles: 0, realisedReturnPct: null })
    // the wheel and the call strategy have nothing live: no cached ticker to say what they would sell
    expect(body.strategies[0].currentCycle).toBeNull()
    expect(body.strategies[0].currentCycleNote).toMatch(/no ticker cached/)
    expect(JSON.stringify(body)).not.toContain(userId)

    // expiry deep in the money: the cycle loses, and every statistic shows it
    sim.control.setPrice('ETH', '1500')
    sim.control.advanceTo(((open?.expiry_sec as number) + 60) * 1000)
    await runPlacing(place)
    const settled = await position(req.id)
    expect(settled?.state).toBe('settled')
    const net = premium - BigInt(settled?.fees ?? '0') - BigInt(settled?.settlement_cost ?? '0')
    expect(net < 0n).toBe(true)
    const collateral = (strikeE18 * filledE18) / E18 / 10n ** 12n
    const expected = pctString(ratio(net, collateral))

    const after = (await get('/ETH/strategies?strategy=put')).json()
    expect(after.strategies).toHaveLength(1)
    const s = after.strategies[0]
    expect(s.history[0]).toMatchObject({
      cycleId: `put:${open?.instrument}`,
      status: 'settled',
      outcome: 'itm',
      legs: 1,
      realisedReturnPct: expected,
      cumulativeRealisedReturnPct: expected,
    })
    expect(s.statistics.sinceStart.strategy).toMatchObject({
      settledCycles: 1,
      losingCycles: 1,
      realisedReturnPct: expected,
      hitRatio: '0.0000',
      otmRatio: '0.0000',
      averageLossPct: expected,
      maxDrawdownPct: expected.slice(1),
    })
    expect(s.currentCycle).toBeNull()

    // WS /ws/strategies saw each step the ticks took, in sequence order, with no user in any message
    await ws.next((m) => m.event === 'settlement', 'settlement event')
    const seen = ws.messages.filter((m) => m.type === 'strategy')
    ws.close()
    const seqs = seen.map((m) => m.seq as number)
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y))
    expect(new Set(seqs).size).toBe(seqs.length)
    const kinds = seen.map((m) => (m.event === 'order' ? `order:${m.step}` : m.event))
    for (const k of ['cycle_opened', 'order:placed', 'order:repriced', 'window_end', 'fill', 'settlement', 'capacity'])
      expect(kinds, k).toContain(k)
    const byEvent = (e: string) => seen.find((m) => m.event === e) as Msg
    expect(byEvent('cycle_opened')).toMatchObject({ strategy: 'put', side: 'put', instrument: open?.instrument })
    expect(byEvent('window_end')).toMatchObject({ decision: 'crossed', instrument: open?.instrument })
    expect(byEvent('settlement')).toMatchObject({ outcome: 'itm', cycleRealisedReturnPct: expected })
    expect(JSON.stringify(seen)).not.toContain(userId)
    await waitFor(() => ws.closed, 'closed')

    // the chart: one overlay for the cycle, one point of the return series at its expiry
    const from = START
    const to = START + 4 * DAY
    const chart = (await get(`/ETH/chart?interval=1h&from=${iso(from)}&to=${iso(to)}`)).json()
    expect(chart.overlays).toEqual([
      expect.objectContaining({
        cycleId: `put:${open?.instrument}`,
        strategy: 'put',
        instrument: open?.instrument,
        strike: cur.strike,
        expiry: cur.expiry,
        ivAtSale,
        outcome: 'itm',
        cumulativeRealisedReturnPct: expected,
      }),
    ])
    expect(chart.returns).toEqual([{ strategy: 'put', t: cur.expiry, cumulativeRealisedReturnPct: expected }])
    // outside the cycle's life: nothing
    const before = (await get(`/ETH/chart?interval=1h&from=${iso(START - 2 * DAY)}&to=${iso(START - DAY)}`)).json()
    expect(before.overlays).toEqual([])
  })

  it('statistics over hand-built history match hand-computed figures, losses and holding included (BTC)', async () => {
    const S = Date.UTC(2026, 0, 1, 8)
    const NOW = S + 73 * DAY // 365 / 73 = 5: annualising multiplies by 5
    const leg = async (o: {
      strike: bigint
      filled: bigint
      premium: bigint
      fees: bigint
      cost: bigint
      createdMs: number
      expiryMs: number
      outcome: 'itm' | 'otm'
    }) => {
      const instrument = `BTC-${new Date(o.expiryMs).toISOString().slice(0, 10).replaceAll('-', '')}-${o.strike}-P`
      await stack.sql`insert into positions (user_id, asset, side, subaccount_id, state, collateral_currency,
          collateral_amount, instrument, strike_e18, expiry_sec, size_e18, filled_e18, premium, fees, outcome,
          settlement_cost, created_at, closed_at)
        values (${randomUUID()}, 'BTC', 'put', ${randomUUID()}, 'settled', 'USDC', ${(o.strike * o.filled).toString()},
          ${instrument}, ${(o.strike * E18).toString()}, ${o.expiryMs / 1000}, ${((o.filled * E18) / 10n).toString()},
          ${((o.filled * E18) / 10n).toString()}, ${o.premium.toString()}, ${o.fees.toString()}, ${o.outcome},
          ${o.cost.toString()}, ${new Date(o.createdMs)}, ${new Date(o.expiryMs)})`
    }
    // A: +1.8 %; B: −10 % (in the money); C: +3 % (contracts in tenths: filled 1 = 0.1)
    const base = { fees: 0n, cost: 0n, outcome: 'otm' as const }
    await leg({
      ...base,
      strike: 100_000n,
      filled: 1n,
      premium: USDC(200),
      fees: USDC(20),
      createdMs: S,
      expiryMs: S + 7 * DAY,
    })
    await leg({
      strike: 100_000n,
      filled: 1n,
      premium: USDC(200),
      fees: USDC(20),
      cost: USDC(1_180),
      outcome: 'itm',
      createdMs: S + 8 * DAY,
      expiryMs: S + 14 * DAY,
    })
    await leg({
      ...base,
      strike: 50_000n,
      filled: 2n,
      premium: USDC(300),
      createdMs: S + 50 * DAY,
      expiryMs: S + 60 * DAY,
    })
    const candle = (interval: Candle['interval'], atMs: number, close: bigint): Candle => ({
      asset: 'BTC',
      interval,
      bucketStartMs: atMs,
      openE18: close * E18,
      highE18: close * E18,
      lowE18: close * E18,
      closeE18: close * E18,
      tickCount: 1,
      firstTickMs: atMs,
      lastTickMs: atMs,
    })
    await upsertCandles(stack.sql, [
      candle('1m', S, 100_000n),
      candle('1d', S + 10 * DAY, 80_000n),
      candle('1m', S + 45 * DAY, 90_000n),
      candle('1m', NOW - MIN, 110_000n),
    ])
    const fixed = await startApp(() => NOW)
    const res = await get('/btc/strategies?strategy=put&limit=2', fixed)
    expect(res.statusCode).toBe(200)
    const put = res.json().strategies[0]
    expect(put.historyTotal).toBe(3)
    expect(put.history.map((c: { realisedReturnPct: string }) => c.realisedReturnPct)).toEqual(['3.0000', '-10.0000'])
    expect(put.history[1]).toMatchObject({
      collateral: '10000',
      premium: '200',
      fees: '20',
      settlementCost: '1180',
      net: '-1000',
      premiumYieldPct: '1.8000',
      cumulativeRealisedReturnPct: '-8.3800',
    })
    expect(put.statistics.sinceStart).toEqual({
      from: iso(S),
      to: iso(NOW),
      strategy: {
        settledCycles: 3,
        losingCycles: 1,
        realisedReturnPct: '-5.6314', // 1.018 × 0.9 × 1.03 − 1
        annualisedReturnPct: '-28.1570', // × 365 / 73
        hitRatio: '0.6666',
        otmRatio: '0.6666',
        averageLossPct: '-10.0000',
        maxDrawdownPct: '10.0000', // 1.018 → 0.9162
      },
      hold: {
        startPrice: '100000',
        endPrice: '110000',
        returnPct: '10.0000',
        annualisedReturnPct: '50.0000',
        maxDrawdownPct: '20.0000', // 100,000 → 80,000 (the daily close of day 10)
      },
    })
    expect(put.statistics.last4Weeks).toEqual({
      from: iso(NOW - 28 * DAY),
      to: iso(NOW),
      strategy: {
        settledCycles: 1,
        losingCycles: 0,
        realisedReturnPct: '3.0000',
        annualisedReturnPct: '39.1071', // 3 % × 365 / 28
        hitRatio: '1.0000',
        otmRatio: '1.0000',
        averageLossPct: null,
        maxDrawdownPct: '0.0000',
      },
      hold: {
        startPrice: '90000',
        endPrice: '110000',
        returnPct: '22.2222',
        annualisedReturnPct: '289.6825',
        maxDrawdownPct: '0.0000',
      },
    })
    // strategies without a cycle have no statistics, and say why they show no current cycle
    const all = (await get('/BTC/strategies', fixed)).json()
    expect(all.strategies[0]).toMatchObject({ kind: 'wheel', history: [], statistics: { sinceStart: null } })
  })

  it('ivAtSale: the IV the legs recorded, weighted by contracts sold; null when none recorded one', async () => {
    const exp1 = Date.UTC(2025, 2, 7, 8)
    const exp2 = Date.UTC(2025, 2, 14, 8)
    const X = 'ETH-20250307-3500-C'
    const Y = 'ETH-20250314-3600-C'
    const leg = async (instrument: string, expiryMs: number, filled: bigint, iv: string | null) =>
      stack.sql`insert into positions (user_id, asset, side, subaccount_id, state, collateral_currency,
          collateral_amount, instrument, strike_e18, expiry_sec, size_e18, filled_e18, premium, fees, outcome,
          settlement_cost, created_at, closed_at, iv_e18)
        values (${randomUUID()}, 'ETH', 'call', ${randomUUID()}, 'settled', 'ETH', ${(filled * E18).toString()},
          ${instrument}, ${(3500n * E18).toString()}, ${expiryMs / 1000}, ${(filled * E18).toString()},
          ${(filled * E18).toString()}, ${USDC(10).toString()}, '0', 'otm', '0', ${new Date(expiryMs - 3 * DAY)},
          ${new Date(expiryMs)}, ${iv === null ? null : toE18(iv).toString()})`
    await leg(X, exp1, 1n, '0.5')
    await leg(X, exp1, 3n, '0.8')
    await leg(X, exp1, 2n, null) // sold before IVs were recorded: left out of the weighting
    await leg(Y, exp2, 1n, null)
    const calls = (await get('/ETH/strategies?strategy=call')).json().strategies[0]
    const byId = new Map(calls.history.map((c: { cycleId: string }) => [c.cycleId, c]))
    expect(byId.get(`call:${X}`)).toMatchObject({ legs: 3, contracts: '6', ivAtSale: '0.725' }) // (0.5 + 2.4) / 4
    expect(byId.get(`call:${Y}`)).toMatchObject({ legs: 1, ivAtSale: null })
    const chart = (
      await get(`/ETH/chart?interval=1d&from=${iso(Date.UTC(2025, 2, 1))}&to=${iso(Date.UTC(2025, 2, 20))}`)
    ).json()
    expect(chart.overlays.map((o: { cycleId: string; ivAtSale: string | null }) => [o.cycleId, o.ivAtSale])).toEqual([
      [`call:${X}`, '0.725'],
      [`call:${Y}`, null],
    ])
  })

  it('the Postgres part (history, statistics, live cycles) is reused until a strategy event bumps the sequence', async () => {
    const cached = await startApp(() => sim.control.nowMs(), 60_000)
    const putOf = async () => (await get('/BTC/strategies?strategy=put', cached)).json().strategies[0]
    const before = await putOf()
    expect(before.liveCycles).toBe(0)
    // a leg goes live (its fills land) without an event yet
    const expirySec = Math.floor((sim.control.nowMs() + 3 * DAY) / DAY) * (DAY / 1000) + 8 * 3600
    const instrument = `BTC-${new Date(expirySec * 1000).toISOString().slice(0, 10).replaceAll('-', '')}-80000-P`
    const [row] = await stack.sql<{ id: string }[]>`insert into positions (user_id, asset, side, subaccount_id, state,
        collateral_currency, collateral_amount, instrument, strike_e18, expiry_sec, size_e18, filled_e18, premium, fees)
      values (${randomUUID()}, 'BTC', 'put', ${randomUUID()}, 'open', 'USDC', ${USDC(8_000).toString()}, ${instrument},
        ${(80_000n * E18).toString()}, ${expirySec}, ${(E18 / 10n).toString()}, ${(E18 / 10n).toString()},
        ${USDC(100).toString()}, '0')
      returning id`
    const stale = await putOf()
    expect(stale.liveCycles).toBe(0) // within the reuse window, no event: the earlier read stands
    expect(stale.historyTotal).toBe(before.historyTotal)
    const pub = new Redis(stack.ctx.config.cacheUrl, { maxRetriesPerRequest: 1 })
    redises.push(pub)
    await publishStrategyEvent(pub, strategyNames(names), 'BTC', {
      ts: new Date(sim.control.nowMs()).toISOString(),
      event: 'window_end',
      strategy: 'put',
      instrument,
      decision: 'completed',
      reason: 'everything offered was sold',
    })
    // the event reaches this process over pub/sub: the public answer follows it within that delivery
    let fresh = await putOf()
    for (let i = 0; i < 40 && fresh.liveCycles !== 1; i++) {
      await new Promise((r) => setTimeout(r, 25))
      fresh = await putOf()
    }
    expect(fresh.liveCycles).toBe(1)
    expect(fresh.currentCycle).toMatchObject({ status: 'open', instrument, sold: { legs: 1, contracts: '0.1' } })
    expect(fresh.history[0]).toMatchObject({ cycleId: `put:${instrument}`, status: 'open' })
    await stack.sql`delete from positions where id = ${row?.id as string}`
  })

  it('an unknown asset answers 404, a bad query 400, and the OpenAPI document publishes the shapes', async () => {
    for (const url of ['/doge/strategies', '/usdc/strategies']) {
      const r = await get(url)
      expect(r.statusCode, url).toBe(404)
      expect(r.json()).toMatchObject({ statusCode: 404, code: 'UNKNOWN_ASSET' })
    }
    for (const q of ['limit=0', 'limit=501', 'limit=x', 'strategy=strangle', 'foo=1']) {
      const r = await get(`/eth/strategies?${q}`)
      expect(r.statusCode, q).toBe(400)
      expect(r.json()).toMatchObject({ statusCode: 400 })
    }
    const doc = (await get('/docs/json')).json()
    expect(doc.paths['/{asset}/strategies'].get.responses['200']).toBeDefined()
    expect(doc.paths['/ws/strategies']).toBeDefined()
    expect(JSON.stringify(inlineRefs(doc, doc.paths['/{asset}/strategies']))).toContain('maxDrawdownPct')
  })
})

function toE18(decimal: string): bigint {
  const [int = '0', frac = ''] = decimal.split('.')
  return BigInt(int) * E18 + BigInt(frac.padEnd(18, '0').slice(0, 18))
}
