import { type RunningSimulator, startDeriveSimulator } from '@wh/derive-simulator'
import { HttpTransport, publicReader } from '@wh/exchange'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { START } from './market-support'
import { type Api, fundedUser, startApi } from './support'

/**
 * POST /quotes with a wheel's settings (docs/trading.md "Economics", "Wheel settings"): the first
 * leg is quoted as the settings choose it, the way the placing tick will: by target delta, or by
 * distance from the index, inside the settings' tenor window. Against the Derive simulator.
 */
describe('a quote follows the wheel settings it is asked with', () => {
  let sim: RunningSimulator
  let api: Api
  let token: string

  beforeAll(async () => {
    sim = await startDeriveSimulator({ chainId: 901, startMs: START })
    api = await startApi({ EXCHANGE_HTTP_URL: sim.v3HttpUrl, EXCHANGE_WS_URL: sim.v3WsUrl })
    api.clock.set(START)
    token = (await fundedUser(api, 10_000_000_000n)).token
  })
  afterAll(async () => {
    await api?.close()
    await sim?.close()
  })

  const quote = (payload: object) =>
    api.app.inject({ method: 'POST', url: '/quotes', headers: { authorization: `Bearer ${token}` }, payload })
  const deltaOf = async (instrument: string) => {
    const t = await publicReader(new HttpTransport({ baseUrl: sim.v3HttpUrl })).getTicker(instrument)
    return Math.abs(Number(t.option_pricing?.delta))
  }
  const wheel = { asset: 'ETH', side: 'wheel', amount: '5000' }

  it('a lower target delta sells a strike further from the index, nearer that delta', async () => {
    const profile = (await quote(wheel)).json()
    const low = await quote({ ...wheel, settings: { putTargetDeltaBps: 1000 } })
    expect(low.statusCode, low.body).toBe(200)
    const q = low.json()
    expect(q.instrument).not.toBe(profile.instrument)
    expect(Number(q.strike)).toBeLessThan(Number(profile.strike))
    expect(Math.abs((await deltaOf(q.instrument)) - 0.1)).toBeLessThan(
      Math.abs((await deltaOf(profile.instrument)) - 0.1),
    )
  })

  it('strike by distance from the index: the put nearest that far below the index', async () => {
    const res = await quote({ ...wheel, settings: { strikeBy: 'otm', otmBps: 1000 } })
    expect(res.statusCode, res.body).toBe(200)
    const q = res.json()
    const distanceBps = ((Number(q.index) - Number(q.strike)) / Number(q.index)) * 10_000
    expect(distanceBps).toBeGreaterThan(0)
    expect(Math.abs(distanceBps - 1000)).toBeLessThanOrEqual(500) // the balanced profile's tolerance
  })

  it('refuses settings on a put (400) and outside the bounds (422), as POST /positions does', async () => {
    const put = await quote({ ...wheel, side: 'put', settings: { putTargetDeltaBps: 1000 } })
    expect(put.json()).toMatchObject({ statusCode: 400, code: 'SETTINGS_ONLY_FOR_WHEEL' })
    const far = await quote({ ...wheel, settings: { putTargetDeltaBps: 9000 } })
    expect(far.json()).toMatchObject({ statusCode: 422, code: 'SETTING_OUT_OF_BOUNDS' })
  })
})
