import { randomUUID } from 'node:crypto'
import { type RunningSimulator, startDeriveSimulator } from '@wh/derive-simulator'
import { HttpTransport, type Instrument, type PublicReader, publicReader, toE18 } from '@wh/exchange'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Api, fundedUser, newAccount, signIn, startApi } from './support'

/**
 * GET /wheels/{id}/cycles (docs/trading.md "Economics"): a wheel started through POST /positions,
 * its legs sold at the Derive simulator's marks with the fees its instruments publish (the fill
 * rows written as the fills tick writes them), one leg settled in the money and one bought back:
 * each cycle's figures, the running net with the losing cycles, the comparison with holding the
 * asset from the stored candles, paging, and 404 for another user's wheel.
 */
describe('wheel cycles: the economics of each leg', () => {
  let sim: RunningSimulator
  let api: Api
  let exchange: PublicReader
  const E18 = 10n ** 18n
  const dec6 = (v: bigint) =>
    `${v < 0n ? '-' : ''}${(v < 0n ? -v : v) / 1_000_000n}.${((v < 0n ? -v : v) % 1_000_000n).toString().padStart(6, '0')}`

  beforeAll(async () => {
    sim = await startDeriveSimulator({ chainId: 901, startMs: Date.now() })
    api = await startApi({ EXCHANGE_HTTP_URL: sim.v3HttpUrl, EXCHANGE_WS_URL: sim.v3WsUrl })
    api.clock.set(sim.control.nowMs())
    exchange = publicReader(new HttpTransport({ baseUrl: sim.v3HttpUrl }))
  })
  afterAll(async () => {
    await api?.close()
    await sim?.close()
  })

  const get = (token: string, url: string) =>
    api.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } })

  /** An option of `type` at the simulator with its ticker, and a fill of `size` at its mark with its published fees. */
  async function fillAtMark(type: 'P' | 'C', size: bigint, role: 'maker' | 'taker') {
    const nowSec = sim.control.nowMs() / 1000
    const all = await exchange.getInstruments({ currency: 'ETH', instrument_type: 'option' })
    const i = all.find(
      (x) => x.option_details?.option_type === type && (x.option_details?.expiry ?? 0) > nowSec + 86_400,
    ) as Instrument
    const t = await exchange.getTicker(i.instrument_name)
    const mark = toE18(t.mark_price)
    const premium = (size * mark) / E18 / 10n ** 12n
    const rateE18 =
      (((toE18(t.index_price) * size) / E18) * toE18(role === 'maker' ? i.maker_fee_rate : i.taker_fee_rate)) / E18
    const cap = (((mark * size) / E18) * toE18(i.mark_price_fee_rate_cap ?? '1')) / E18
    const feeE18 = (role === 'taker' ? toE18(i.base_fee) : 0n) + (rateE18 < cap ? rateE18 : cap)
    const exchangeFee = (feeE18 + 10n ** 12n - 1n) / 10n ** 12n
    return { i, mark, premium, exchangeFee, platformFee: premium / 10n, index: toE18(t.index_price) }
  }

  async function startWheel() {
    const { token, userId } = await fundedUser(api, 5_000_000_000n)
    const res = await api.app.inject({
      method: 'POST',
      url: '/positions',
      headers: { authorization: `Bearer ${token}` },
      payload: { asset: 'ETH', side: 'wheel', amount: '5000' },
    })
    expect(res.statusCode).toBe(202)
    return { token, userId, wheelId: res.json().wheelId as string, firstLeg: res.json().id as string }
  }

  /** Records a leg's life as the fills and settlement ticks leave it. */
  async function sold(
    legId: string,
    f: Awaited<ReturnType<typeof fillAtMark>>,
    size: bigint,
    end: { settlementCost?: bigint; closeCost?: bigint; bought?: bigint; buyFee?: bigint },
  ) {
    const { sql } = api.ctx.database
    const [p] = await sql<
      { user_id: string; subaccount_id: string }[]
    >`select user_id, subaccount_id from positions where id = ${legId}`
    const fill = async (amount: bigint, premium: bigint, exchangeFee: bigint, platformFee: bigint) =>
      sql`insert into position_fills (trade_id, position_id, user_id, subaccount_id, amount_e18, price_e18, premium,
          exchange_fee, platform_fee, traded_at)
        values (${randomUUID()}, ${legId}, ${p?.user_id ?? ''}, ${p?.subaccount_id ?? ''}, ${amount.toString()},
          ${f.mark.toString()}, ${premium.toString()}, ${exchangeFee.toString()}, ${platformFee.toString()}, now())`
    await fill(size, f.premium, f.exchangeFee, f.platformFee)
    if (end.bought) await fill(-end.bought, -(end.closeCost ?? 0n), end.buyFee ?? 0n, 0n)
    const fees = f.exchangeFee + f.platformFee + (end.buyFee ?? 0n)
    await sql`update positions set state = ${end.bought ? 'closed' : 'settled'}, instrument = ${f.i.instrument_name},
      strike_e18 = ${toE18(f.i.option_details?.strike ?? '0').toString()}, expiry_sec = ${f.i.option_details?.expiry ?? 0},
      size_e18 = ${size.toString()}, filled_e18 = ${size.toString()}, premium = ${f.premium.toString()}, fees = ${fees.toString()},
      bought_e18 = ${(end.bought ?? 0n).toString()}, close_cost = ${(end.closeCost ?? 0n).toString()},
      settlement_cost = ${end.bought ? null : (end.settlementCost ?? 0n).toString()},
      outcome = ${end.bought ? null : end.settlementCost ? 'itm' : 'otm'}, closed_at = now()
      where id = ${legId}`
  }

  /** A next leg of the wheel, opened as the runner opens one. */
  async function nextLeg(wheelId: string, side: 'put' | 'call', currency: string, amount: string) {
    const { sql } = api.ctx.database
    const [p] = await sql<{ id: string }[]>`
      insert into positions (user_id, asset, side, wheel_id, subaccount_id, state, collateral_currency, collateral_amount, created_at)
      select user_id, asset, ${side}, id, subaccount_id, 'requested', ${currency}, ${amount}, now() + interval '1 second' * ${side === 'call' ? 1 : 2}
      from wheels where id = ${wheelId} returning id`
    await sql`update wheels set cycles = cycles + 1, current_position_id = ${p?.id ?? null} where id = ${wheelId}`
    return p?.id as string
  }

  it('each cycle with its premium, fees, costs and net; the running net with a losing cycle; against holding', async () => {
    const { token, wheelId, firstLeg } = await startWheel()
    const { sql } = api.ctx.database
    const size = 15n * 10n ** 17n // 1.5 contracts
    const put = await fillAtMark('P', size, 'maker')
    await sold(firstLeg, put, size, {})
    const callLeg = await nextLeg(wheelId, 'call', 'ETH', size.toString())
    const c = await fillAtMark('C', size, 'taker')
    const settlementCost = c.premium * 3n // called away far in the money: a losing cycle
    await sold(callLeg, c, size, { settlementCost })
    const thirdLeg = await nextLeg(wheelId, 'put', 'USDC', '5000000000')
    const p3 = await fillAtMark('P', size, 'maker')
    const closeCost = p3.premium / 2n
    await sold(thirdLeg, p3, size, { bought: size, closeCost, buyFee: 700_000n })

    // the index at the start (a candle before the wheel) and now (a candle an hour later), 10 % apart
    const [w] = await sql<{ created_at: Date }[]>`select created_at from wheels where id = ${wheelId}`
    const startIndex = put.index
    const endIndex = (put.index * 11n) / 10n
    const candle = (at: Date, close: bigint) =>
      sql`insert into price_candles (asset, interval, bucket_start, open_e18, high_e18, low_e18, close_e18, tick_count,
          first_tick_at, last_tick_at)
        values ('ETH', '1m', ${at}, ${close.toString()}, ${close.toString()}, ${close.toString()}, ${close.toString()}, 1, ${at}, ${at})
        on conflict do nothing`
    const created = w?.created_at.getTime() as number
    await candle(new Date(Math.floor(created / 60_000) * 60_000 - 60_000), startIndex)
    await candle(new Date(Math.floor(created / 60_000) * 60_000 + 30 * 60_000), endIndex)
    api.clock.set(created + 3_600_000)

    const nets = [
      put.premium - put.exchangeFee - put.platformFee,
      c.premium - c.exchangeFee - c.platformFee - settlementCost,
      p3.premium - p3.exchangeFee - 700_000n - p3.platformFee - closeCost,
    ]
    const cumulative = [nets[0], (nets[0] ?? 0n) + (nets[1] ?? 0n), nets.reduce((a, b) => a + b, 0n)] as bigint[]
    const res = await get(token, `/wheels/${wheelId}/cycles`)
    expect(res.statusCode).toBe(200)
    const body = res.json()
    const start = 5_000_000_000n
    const holdValue = (start * endIndex) / startIndex
    expect(body).toMatchObject({
      wheelId,
      asset: 'ETH',
      startAmount: '5000.000000',
      cycles: 3,
      cumulativeNet: dec6(cumulative[2] as bigint),
      wheelReturnBps: Number(((cumulative[2] as bigint) * 10_000n) / start),
      hold: {
        value: dec6(holdValue),
        returnBps: Number(((holdValue - start) * 10_000n) / start),
        index: expect.any(String),
      },
      nextCursor: null,
    })
    expect(nets[1]).toBeLessThan(0n)
    expect(body.items.map((i: { cycle: number }) => i.cycle)).toEqual([3, 2, 1])
    expect(body.items[2]).toMatchObject({
      positionId: firstLeg,
      side: 'put',
      instrument: put.i.instrument_name,
      size: '1.500000000000000000',
      outcome: 'otm',
      premium: dec6(put.premium),
      exchangeFees: dec6(put.exchangeFee),
      platformFee: dec6(put.platformFee),
      settlementCost: '0.000000',
      closeCost: '0.000000',
      net: dec6(nets[0] as bigint),
      cumulativeNet: dec6(cumulative[0] as bigint),
    })
    expect(body.items[1]).toMatchObject({
      side: 'call',
      outcome: 'itm',
      exchangeFees: dec6(c.exchangeFee),
      settlementCost: dec6(settlementCost),
      net: dec6(nets[1] as bigint),
      cumulativeNet: dec6(cumulative[1] as bigint),
    })
    expect(body.items[0]).toMatchObject({
      positionId: thirdLeg,
      size: '0.000000000000000000',
      exchangeFees: dec6(p3.exchangeFee + 700_000n),
      closeCost: dec6(closeCost),
      net: dec6(nets[2] as bigint),
    })

    // newest first, two at a time
    const first = await get(token, `/wheels/${wheelId}/cycles?limit=2`)
    expect(first.json().items.map((i: { cycle: number }) => i.cycle)).toEqual([3, 2])
    const second = await get(token, `/wheels/${wheelId}/cycles?limit=2&cursor=${first.json().nextCursor}`)
    expect(second.json()).toMatchObject({ items: [{ cycle: 1 }], nextCursor: null })
    expect((await get(token, `/wheels/${wheelId}/cycles?cursor=bm90LWEtY3Vyc29y`)).statusCode).toBe(400)

    // the same answer in GET /positions: each leg's realised P&L is its cycle's net
    const list = await get(token, '/positions')
    const pnl = Object.fromEntries(
      list.json().positions.map((p: { id: string; realizedPnl: string }) => [p.id, p.realizedPnl]),
    )
    expect(pnl[firstLeg]).toBe(dec6(nets[0] as bigint))
  })

  it("another user's wheel, or none, is a 404; a wheel with one unsold leg nets zero", async () => {
    const { token, wheelId } = await startWheel()
    const other = await signIn(api.app, newAccount())
    expect((await get(other, `/wheels/${wheelId}/cycles`)).statusCode).toBe(404)
    expect((await get(token, `/wheels/${randomUUID()}/cycles`)).json()).toMatchObject({ code: 'NOT_FOUND' })
    expect((await get(token, '/wheels/not-a-uuid/cycles')).statusCode).toBe(400)
    const own = await get(token, `/wheels/${wheelId}/cycles`)
    expect(own.statusCode).toBe(200)
    expect(own.json()).toMatchObject({ cycles: 1, cumulativeNet: '0.000000', items: [{ cycle: 1, net: '0.000000' }] })
  })
})
