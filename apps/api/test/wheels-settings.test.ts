import { randomUUID } from 'node:crypto'
import { append } from '@wh/ledger'
import { clearPlatformStop, raisePlatformStop } from '@wh/ops'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Api, fundedUser, startApi } from './support'

/**
 * Wheel settings and resuming a wheel (docs/trading.md "Wheel settings"): settings given at the
 * start, changed by PATCH /wheels/{id}, shown in GET /positions, bounded by the profile (balanced
 * in the tests); POST /wheels/{id}/resume and its refusals. The placing tick's use of the settings
 * is apps/worker/test/wheel-settings.test.ts.
 */
describe('wheel settings and resume', () => {
  let api: Api
  const usdc = (n: number) => BigInt(n) * 1_000_000n
  const sql = () => api.ctx.database.sql

  beforeAll(async () => {
    api = await startApi()
  })
  afterAll(async () => api?.close())

  const auth = (token: string) => ({ authorization: `Bearer ${token}` })
  const start = (token: string, settings?: unknown) =>
    api.app.inject({
      method: 'POST',
      url: '/positions',
      headers: auth(token),
      payload: { asset: 'ETH', side: 'wheel', amount: '500', ...(settings !== undefined && { settings }) },
    })
  const patch = (token: string, id: string, body: unknown) =>
    api.app.inject({ method: 'PATCH', url: `/wheels/${id}`, headers: auth(token), payload: body as object })
  const resume = (token: string, id: string) =>
    api.app.inject({ method: 'POST', url: `/wheels/${id}/resume`, headers: auth(token) })
  const wheelsOf = async (token: string) =>
    (await api.app.inject({ method: 'GET', url: '/positions', headers: auth(token) })).json().wheels

  const BALANCED = {
    strikeBy: 'delta',
    putTargetDeltaBps: 2000,
    callTargetDeltaBps: 2000,
    otmBps: 700,
    minTenorHours: 40,
    maxTenorDays: 8,
    atExpiry: 'roll',
  }

  it("GET /trading-config shows the profile's bounds", async () => {
    const res = await api.app.inject({ method: 'GET', url: '/trading-config' })
    expect(res.statusCode).toBe(200)
    expect(res.json().profile.wheelSettingBounds).toEqual({
      targetDeltaBps: { min: 500, max: 3500 },
      otmBps: { min: 200, max: 2500 },
      minTenorHours: { min: 20, max: 80 },
      maxTenorDays: { min: 4, max: 16 },
      defaultOtmBps: 700,
      otmToleranceBps: 500,
    })
  })

  it("a wheel started without settings runs on the profile's; with some, they show in GET /positions", async () => {
    const a = await fundedUser(api, usdc(1000))
    expect((await start(a.token)).statusCode).toBe(202)
    expect((await wheelsOf(a.token))[0].settings).toEqual(BALANCED)

    const b = await fundedUser(api, usdc(1000))
    const res = await start(b.token, { strikeBy: 'otm', otmBps: 1000, minTenorHours: 24, atExpiry: 'settle' })
    expect(res.statusCode, res.body).toBe(202)
    const [w] = await wheelsOf(b.token)
    expect(w).toMatchObject({ id: res.json().wheelId, state: 'running' })
    expect(w.settings).toEqual({ ...BALANCED, strikeBy: 'otm', otmBps: 1000, minTenorHours: 24, atExpiry: 'settle' })

    // the leg shows the settings it was chosen with once the placing tick chose it (written here as it writes them)
    const legOf = async () =>
      (await api.app.inject({ method: 'GET', url: '/positions', headers: auth(b.token) })).json().positions[0]
    expect((await legOf()).legSettings).toBeNull()
    const used = { strikeBy: 'otm', otmBps: 1000, minTenorHours: 24, maxTenorDays: 8 }
    await sql()`update positions set leg_settings = ${sql().json(used)} where id = ${res.json().id}`
    expect((await legOf()).legSettings).toEqual(used)
  })

  it('a setting outside the bounds is a 422 naming it and its bound, and starts nothing', async () => {
    const { token, userId } = await fundedUser(api, usdc(1000))
    const res = await start(token, { putTargetDeltaBps: 4500 })
    expect(res.statusCode).toBe(422)
    expect(res.json()).toMatchObject({
      code: 'SETTING_OUT_OF_BOUNDS',
      details: { setting: 'putTargetDeltaBps', min: 500, max: 3500, value: 4500 },
    })
    const [{ n } = { n: -1 }] = await sql()<{ n: number }[]>`
      select (select count(*) from wheels where user_id = ${userId})::int
        + (select count(*) from positions where user_id = ${userId})::int as n`
    expect(n).toBe(0)
    // not a setting of a single leg; an unknown field or a wrong type is a 400
    const put = await api.app.inject({
      method: 'POST',
      url: '/positions',
      headers: auth(token),
      payload: { asset: 'ETH', side: 'put', amount: '100', settings: { otmBps: 500 } },
    })
    expect(put.statusCode).toBe(400)
    expect(put.json().code).toBe('SETTINGS_ONLY_FOR_WHEEL')
    expect((await start(token, { strikeBy: 'moneyness' })).statusCode).toBe(400)
    expect((await start(token, { leverage: 3 })).statusCode).toBe(400)
  })

  it("PATCH changes the caller's own wheel only; null goes back to the profile's value", async () => {
    const { token } = await fundedUser(api, usdc(1000))
    const wheelId = (await start(token)).json().wheelId as string
    const res = await patch(token, wheelId, { putTargetDeltaBps: 3000, maxTenorDays: 12 })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toMatchObject({ id: wheelId, state: 'running' })
    expect(res.json().settings).toEqual({ ...BALANCED, putTargetDeltaBps: 3000, maxTenorDays: 12 })
    expect((await wheelsOf(token))[0].settings).toEqual(res.json().settings)

    const back = await patch(token, wheelId, { putTargetDeltaBps: null })
    expect(back.json().settings).toEqual({ ...BALANCED, maxTenorDays: 12 })

    const out = await patch(token, wheelId, { minTenorHours: 100 })
    expect(out.statusCode).toBe(422)
    expect(out.json().details).toEqual({ setting: 'minTenorHours', min: 20, max: 80, value: 100 })
    expect((await patch(token, wheelId, { otmBps: 0 })).statusCode).toBe(400)
    expect((await patch(token, wheelId, {})).statusCode).toBe(400)
    const none = await api.app.inject({ method: 'PATCH', url: `/wheels/${wheelId}`, headers: auth(token) })
    expect(none.statusCode).toBe(400)

    const stranger = await fundedUser(api, usdc(10))
    const theirs = await patch(stranger.token, wheelId, { otmBps: 500 })
    expect(theirs.statusCode).toBe(404)
    expect((await patch(token, randomUUID(), { otmBps: 500 })).statusCode).toBe(404)
    expect((await wheelsOf(token))[0].settings.otmBps).toBe(700)
  })

  it('resume: 409 while running or stopping; a stopped wheel with money in its subaccount runs again', async () => {
    const { token, userId } = await fundedUser(api, usdc(1000))
    const wheelId = (await start(token)).json().wheelId as string
    const running = await resume(token, wheelId)
    expect(running.statusCode).toBe(409)
    expect(running.json().code).toBe('WHEEL_ALREADY_RUNNING')

    // stop now: its leg, not at the exchange yet, is cancelled; nothing of the wheel can rest at the
    // exchange, so it is stopped at once (a stopping wheel's 409 WHEEL_STOPPING: wheel-leg-cancel.test.ts)
    const stop = await api.app.inject({ method: 'DELETE', url: `/positions/${wheelId}?mode=now`, headers: auth(token) })
    expect(stop.json()).toMatchObject({ action: 'stop', state: 'stopped' })

    // the cancelled leg's collateral went back to the free balance: nothing for the wheel to sell
    const empty = await resume(token, wheelId)
    expect(empty.statusCode).toBe(422)
    expect(empty.json().code).toBe('NOTHING_TO_WHEEL')

    // 400 USDC in the ETH subaccount, unclaimed (as after a leg expired out of the money)
    const exchangeId = 800_000 + Math.floor(Math.random() * 90_000)
    await sql()`update subaccounts set exchange_id = ${exchangeId} where user_id = ${userId} and asset = 'ETH'`
    await append(sql(), {
      type: 'subaccount_funded',
      payload: {
        userId,
        subaccountId: String(exchangeId),
        transactionId: randomUUID(),
        currency: 'USDC',
        amount: usdc(400),
      },
      occurredAt: new Date(),
    })
    const stranger = await fundedUser(api, usdc(10))
    expect((await resume(stranger.token, wheelId)).statusCode).toBe(404)

    // the subaccount stopped by reconciliation: 422
    await sql()`update subaccounts set stopped_at = now(), stop_reason = 'divergence' where exchange_id = ${exchangeId}`
    const stopped = await resume(token, wheelId)
    expect(stopped.statusCode).toBe(422)
    expect(stopped.json().code).toBe('SUBACCOUNT_STOPPED')
    await sql()`update subaccounts set stopped_at = null, stop_reason = null where exchange_id = ${exchangeId}`

    // the platform stopped: 503
    await raisePlatformStop(sql(), { raisedBy: 'operator', reason: 'test: a deficit under review', actor: 'test' })
    try {
      const platform = await resume(token, wheelId)
      expect(platform.statusCode).toBe(503)
      expect(platform.json().code).toBe('PLATFORM_STOPPED')
    } finally {
      await clearPlatformStop(sql(), { actor: 'test', reason: 'test over' })
    }

    const ok = await resume(token, wheelId)
    expect(ok.statusCode, ok.body).toBe(200)
    expect(ok.json()).toMatchObject({ id: wheelId, state: 'running', stopMode: null, currentPositionId: null })
    expect((await resume(token, wheelId)).json().code).toBe('WHEEL_ALREADY_RUNNING')
  })

  it('resume: 409 ANOTHER_WHEEL_RUNNING when a newer wheel runs on the asset', async () => {
    const { token } = await fundedUser(api, usdc(1000))
    const first = (await start(token)).json().wheelId as string
    await api.app.inject({ method: 'DELETE', url: `/positions/${first}?mode=now`, headers: auth(token) })
    await sql()`update wheels set state = 'stopped', stopped_at = now(), current_position_id = null where id = ${first}`
    const second = await start(token)
    expect(second.statusCode, second.body).toBe(202)
    const res = await resume(token, first)
    // checked before the holdings: the running wheel is the reason, whatever the subaccount holds
    expect(res.statusCode).toBe(409)
    expect(res.json()).toMatchObject({ code: 'ANOTHER_WHEEL_RUNNING', details: { asset: 'ETH' } })
  })
})
