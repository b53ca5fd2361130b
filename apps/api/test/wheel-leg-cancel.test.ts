import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Api, fundedUser, startApi } from './support'

/**
 * Cancelling a wheel's live leg stops the wheel (docs/trading.md "Cancelling a wheel's leg"): at
 * once when nothing of the wheel reached the exchange, else `stopping` until the runner sees no
 * order rest. The wheel is never left running without a leg, so a new wheel can start at once.
 */
describe("cancelling a wheel's leg", () => {
  let api: Api
  const usdc = (n: number) => BigInt(n) * 1_000_000n

  beforeAll(async () => {
    api = await startApi()
  })
  afterAll(async () => api?.close())

  const auth = (token: string) => ({ authorization: `Bearer ${token}` })
  const startWheel = async (token: string, amount = '500') => {
    const res = await api.app.inject({
      method: 'POST',
      url: '/positions',
      headers: auth(token),
      payload: { asset: 'ETH', side: 'wheel', amount },
    })
    expect(res.statusCode, res.body).toBe(202)
    return res.json() as { id: string; wheelId: string }
  }
  const del = (token: string, id: string, qs = '') =>
    api.app.inject({ method: 'DELETE', url: `/positions/${id}${qs}`, headers: auth(token) })
  const wheelRow = async (id: string) =>
    (
      await api.ctx.database.sql<{ state: string; stop_mode: string | null; current_position_id: string | null }[]>`
        select state, stop_mode, current_position_id from wheels where id = ${id}`
    )[0]

  it('a leg not at the exchange: the wheel is stopped with it, its log says why, and a new wheel starts', async () => {
    const { token } = await fundedUser(api, usdc(1000))
    const first = await startWheel(token)
    const res = await del(token, first.id)
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({
      id: first.id,
      action: 'cancel',
      outcome: 'cancelled',
      state: 'cancelled',
      wheel: { id: first.wheelId, state: 'stopped' },
    })
    expect(await wheelRow(first.wheelId)).toEqual({ state: 'stopped', stop_mode: 'now', current_position_id: null })

    // the positions list and the decision log say why
    const listed = (await api.app.inject({ method: 'GET', url: '/positions', headers: auth(token) })).json()
    expect(listed.wheels).toEqual([
      expect.objectContaining({ id: first.wheelId, state: 'stopped', reason: 'stopped: its leg was cancelled' }),
    ])
    const log = (
      await api.app.inject({ method: 'GET', url: `/wheels/${first.wheelId}/decisions`, headers: auth(token) })
    ).json()
    expect(log.decisions[0]).toMatchObject({ kind: 'stopped', reason: 'leg_cancelled', positionId: first.id })
    expect(log.decisions[0].message).toContain('its leg was cancelled')

    // no 409 WHEEL_ALREADY_RUNNING: the money came back and a new wheel starts
    const second = await startWheel(token)
    expect(second.wheelId).not.toBe(first.wheelId)
    // a second cancel of the first leg changes nothing
    expect((await del(token, first.id)).json()).toMatchObject({ statusCode: 409, code: 'POSITION_FINISHED' })
  })

  it('a leg placing orders: the wheel is stopping while its orders are cancelled', async () => {
    const { token } = await fundedUser(api, usdc(1000))
    const w = await startWheel(token)
    const { sql } = api.ctx.database
    await sql`update positions set state = 'placing', instrument = 'ETH-20300101-2000-P' where id = ${w.id}`
    const res = await del(token, w.id)
    expect(res.statusCode).toBe(202)
    expect(res.json()).toEqual({
      id: w.id,
      action: 'cancel',
      outcome: 'cancel_requested',
      state: 'placing',
      wheel: { id: w.wheelId, state: 'stopping' },
    })
    expect(await wheelRow(w.wheelId)).toMatchObject({ state: 'stopping', stop_mode: 'now' })
    const resume = await api.app.inject({ method: 'POST', url: `/wheels/${w.wheelId}/resume`, headers: auth(token) })
    expect(resume.json()).toMatchObject({ statusCode: 409, code: 'WHEEL_STOPPING' })
    // while it stops, a new wheel on the asset is still refused, with the reason a person can act on
    const again = await api.app.inject({
      method: 'POST',
      url: '/positions',
      headers: auth(token),
      payload: { asset: 'ETH', side: 'wheel', amount: '100' },
    })
    expect(again.json()).toMatchObject({ statusCode: 409, code: 'WHEEL_ALREADY_RUNNING' })
  })

  it('a later leg after one that reached the exchange: stopping, for the runner to check no order rests', async () => {
    const { token } = await fundedUser(api, usdc(1000))
    const w = await startWheel(token, '300')
    const { sql } = api.ctx.database
    // the first leg was sold and settled; the runner opened a second, not funded yet
    await sql`update positions set state = 'settled', instrument = 'ETH-20300101-2000-P' where id = ${w.id}`
    const second = await api.app.inject({
      method: 'POST',
      url: '/positions',
      headers: auth(token),
      payload: { asset: 'ETH', side: 'put', amount: '200' },
    })
    const leg = second.json().id as string
    await sql`update positions set wheel_id = ${w.wheelId} where id = ${leg}`
    await sql`update wheels set current_position_id = ${leg}, cycles = 2 where id = ${w.wheelId}`
    const res = await del(token, leg)
    expect(res.json()).toMatchObject({ outcome: 'cancelled', wheel: { id: w.wheelId, state: 'stopping' } })
    expect(await wheelRow(w.wheelId)).toMatchObject({ state: 'stopping' })
  })

  it('a single put (no wheel) is cancelled as before, with no wheel in the answer', async () => {
    const { token } = await fundedUser(api, usdc(1000))
    const put = await api.app.inject({
      method: 'POST',
      url: '/positions',
      headers: auth(token),
      payload: { asset: 'ETH', side: 'put', amount: '100' },
    })
    const res = await del(token, put.json().id)
    expect(res.json()).toEqual({ id: put.json().id, action: 'cancel', outcome: 'cancelled', state: 'cancelled' })
  })

  it('stopping a wheel now whose leg is not at the exchange stops it at once (no runner needed)', async () => {
    const { token } = await fundedUser(api, usdc(1000))
    const w = await startWheel(token)
    const res = await del(token, w.wheelId, '?mode=now')
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ id: w.wheelId, action: 'stop', outcome: 'stopped', state: 'stopped' })
    expect(await wheelRow(w.wheelId)).toMatchObject({ state: 'stopped', current_position_id: null })
    const [leg] = await api.ctx.database.sql<{ state: string }[]>`select state from positions where id = ${w.id}`
    expect(leg?.state).toBe('cancelled')
  })
})
