import { randomUUID } from 'node:crypto'
import { type RunningSimulator, startDeriveSimulator } from '@wh/derive-simulator'
import { HttpTransport, type Instrument, type PublicReader, publicReader, toE18 } from '@wh/exchange'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Api, newAccount, signIn, startApi } from './support'

/**
 * DELETE /positions/:id of a sold leg (docs/trading.md "Buying a leg back"): the quote from the
 * exchange's ticker (the Derive simulator over real HTTP), the move to closing, the idempotent
 * second DELETE, 404 for another user's leg, 503 when the exchange cannot be read, and what
 * GET /positions shows of closing and closed legs.
 */
describe('positions: buying a leg back through the API', () => {
  let api: Api
  let sim: RunningSimulator
  let exchange: PublicReader
  let put: Instrument
  const E18 = 10n ** 18n
  const userOf = (t: string) => (api.app.jwt.decode(t) as { sub: string }).sub

  beforeAll(async () => {
    sim = await startDeriveSimulator({ chainId: 901 })
    api = await startApi({ EXCHANGE_HTTP_URL: sim.v3HttpUrl, EXCHANGE_WS_URL: sim.v3WsUrl })
    exchange = publicReader(new HttpTransport({ baseUrl: sim.v3HttpUrl }))
    const options = await exchange.getInstruments({ currency: 'ETH', instrument_type: 'option' })
    const nowSec = api.clock.now().getTime() / 1000
    put = options.find(
      (i) => i.option_details?.option_type === 'P' && (i.option_details?.expiry ?? 0) > nowSec + 86_400,
    ) as Instrument
  })
  afterAll(async () => {
    await api?.close()
    await sim?.close()
  })

  const ticker = () => exchange.getTicker(put.instrument_name)
  const del = (token: string, id: string) =>
    api.app.inject({ method: 'DELETE', url: `/positions/${id}`, headers: { authorization: `Bearer ${token}` } })
  const list = (token: string) =>
    api.app.inject({ method: 'GET', url: '/positions', headers: { authorization: `Bearer ${token}` } })

  /** A user with a sold put of 1.5 contracts at their subaccount (as the placing tick leaves one). */
  async function soldLeg(over: { expirySec?: number } = {}) {
    const token = await signIn(api.app, newAccount())
    const userId = userOf(token)
    const { sql } = api.ctx.database
    const exchangeId = 700_000 + Math.floor(Math.random() * 200_000)
    const [sub] = await sql<{ id: string }[]>`
      insert into subaccounts (user_id, asset, exchange_id) values (${userId}, 'ETH', ${exchangeId}) returning id`
    const [p] = await sql<{ id: string }[]>`
      insert into positions (user_id, asset, side, subaccount_id, state, collateral_currency, collateral_amount,
        instrument, strike_e18, expiry_sec, size_e18, filled_e18, premium, fees)
      values (${userId}, 'ETH', 'put', ${sub?.id ?? ''}, 'open', 'USDC', '5000000000', ${put.instrument_name},
        ${toE18(put.option_details?.strike ?? '0').toString()}, ${over.expirySec ?? put.option_details?.expiry ?? 0},
        ${((15n * E18) / 10n).toString()}, ${((15n * E18) / 10n).toString()}, '60000000', '6500000')
      returning id`
    return { token, userId, id: p?.id as string }
  }

  it('quotes an open leg from the exchange and moves it to closing; a second DELETE answers the same quote', async () => {
    const { token, id } = await soldLeg()
    const t = await ticker()
    const ask = toE18(t.best_ask_price)
    const res = await del(token, id)
    expect(res.statusCode).toBe(202)
    const amount = (15n * E18) / 10n
    const cost = (ask * amount + 10n ** 30n - 1n) / 10n ** 30n
    const e18 = (v: bigint) => `${v / E18}.${(v % E18).toString().padStart(18, '0')}`
    expect(res.json()).toEqual({
      id,
      action: 'close',
      outcome: 'close_requested',
      state: 'closing',
      quote: {
        pricePerUnit: e18(ask),
        amount: '1.500000000000000000',
        cost: `${cost / 1_000_000n}.${(cost % 1_000_000n).toString().padStart(6, '0')}`,
        limitPerUnit: e18((ask * 102n) / 100n),
        quotedAt: api.clock.now().toISOString(),
      },
    })
    const [row] = await api.ctx.database.sql<{ state: string; close_limit_e18: string }[]>`
      select state, close_limit_e18::text from positions where id = ${id}`
    expect(row).toEqual({ state: 'closing', close_limit_e18: ((ask * 102n) / 100n).toString() })

    // a second DELETE reads no price: the exchange failing now does not matter, and the answer is the same
    sim.control.failNext({ method: 'public/get_ticker', httpStatus: 503 })
    const again = await del(token, id)
    expect(again.statusCode).toBe(202)
    expect(again.json()).toEqual(res.json())
    expect(sim.engine.failures).toHaveLength(1)
    sim.engine.failures.length = 0

    const listed = (await list(token)).json().positions[0]
    expect(listed).toMatchObject({
      id,
      state: 'closing',
      bought: '0.000000000000000000',
      closeCost: '0.000000',
      closeLimit: e18((ask * 102n) / 100n),
      realizedPnl: '53.500000',
    })
  })

  it("another user's leg is a 404; an unknown id a 404", async () => {
    const { id } = await soldLeg()
    const other = await signIn(api.app, newAccount())
    expect((await del(other, id)).json()).toMatchObject({ statusCode: 404, code: 'NOT_FOUND' })
    expect((await del(other, randomUUID())).statusCode).toBe(404)
    const [row] = await api.ctx.database.sql<{ state: string }[]>`select state from positions where id = ${id}`
    expect(row?.state).toBe('open')
  })

  it('exchange trouble answers 503 QUOTE_UNAVAILABLE in the error shape and leaves the leg open', async () => {
    const { token, id } = await soldLeg()
    for (const failure of [{ httpStatus: 503 }, { code: -32603 }, { code: 13000 }]) {
      sim.control.failNext({ method: 'public/get_ticker', ...failure })
      const res = await del(token, id)
      expect(res.statusCode, JSON.stringify(failure)).toBe(503)
      expect(res.json()).toEqual({
        statusCode: 503,
        code: 'QUOTE_UNAVAILABLE',
        error: 'Service Unavailable',
        message: expect.stringContaining(put.instrument_name),
      })
    }
    const [row] = await api.ctx.database.sql<{ state: string }[]>`select state from positions where id = ${id}`
    expect(row?.state).toBe('open')
  })

  it('an expired leg cannot be bought back (409); a closed one shows its bought amount and P&L net of the close cost', async () => {
    const past = Math.floor(api.clock.now().getTime() / 1000) - 60
    const expired = await soldLeg({ expirySec: past })
    expect((await del(expired.token, expired.id)).json()).toMatchObject({ statusCode: 409, code: 'CLOSE_UNAVAILABLE' })

    const { token, id } = await soldLeg()
    await api.ctx.database.sql`update positions set state = 'closed', bought_e18 = filled_e18, close_cost = 40000000,
      fees = 7000000, closed_at = now() where id = ${id}`
    expect((await list(token)).json().positions[0]).toMatchObject({
      id,
      state: 'closed',
      bought: '1.500000000000000000',
      closeCost: '40.000000',
      closeLimit: null,
      realizedPnl: '13.000000',
    })
    expect((await del(token, id)).json()).toMatchObject({ statusCode: 409, code: 'POSITION_FINISHED' })
  })
})
