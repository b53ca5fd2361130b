import { randomUUID } from 'node:crypto'
import { signalSignature } from '@wh/trading'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Api, startApi } from './support'

/** POST /webhooks/signals, GET /signals/state, GET /trading-config (spec 4.2, 5.4). */
describe('signals and trading config', () => {
  let api: Api
  let secret: string
  beforeAll(async () => {
    api = await startApi()
    secret = api.ctx.config.webhookSecret
  })
  afterAll(async () => api?.close())

  const nowSec = () => String(Math.floor(api.clock.now().getTime() / 1000))
  function post(body: unknown, o: { ts?: string; sig?: string; raw?: string; secret?: string } = {}) {
    const raw = o.raw ?? JSON.stringify(body)
    const ts = o.ts ?? nowSec()
    return api.app.inject({
      method: 'POST',
      url: '/webhooks/signals',
      headers: {
        'content-type': 'application/json',
        'x-signal-timestamp': ts,
        'x-signal-signature': o.sig ?? signalSignature(o.secret ?? secret, ts, raw),
      },
      payload: raw,
    })
  }
  const state = async () => (await api.app.inject({ method: 'GET', url: '/signals/state' })).json()
  const side = async (asset: string, s: 'put' | 'call') =>
    (await state()).assets.find((a: { asset: string }) => a.asset === asset)[s]
  const signalEvents = async (id: string) =>
    api.ctx.database.sql`select id from ledger_events where type = 'signal_received' and payload->>'signalId' = ${id}`

  it('every side is active before any signal, for every traded asset', async () => {
    const s = await state()
    expect(s.assets.map((a: { asset: string }) => a.asset)).toEqual(['ETH', 'BTC'])
    expect(s.assets[0].put).toEqual({ selling: 'active', reason: null, source: null, signalId: null, since: null })
  })

  it('a signed pause records signal_received and pauses the side; resume undoes it', async () => {
    const id = `sig-${randomUUID()}`
    const res = await post({ id, asset: 'ETH', side: 'put', action: 'pause', reason: 'vol spike', source: 'desk' })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ signalId: id, asset: 'ETH', sides: ['put'], action: 'pause', applied: true })
    expect(await side('ETH', 'put')).toMatchObject({
      selling: 'paused',
      reason: 'vol spike',
      source: 'desk',
      signalId: id,
    })
    expect(await side('ETH', 'call')).toMatchObject({ selling: 'active' })
    expect(await signalEvents(id)).toHaveLength(1)

    api.clock.advance(1000)
    const resume = await post({ id: `${id}-r`, asset: 'ETH', side: 'both', action: 'resume' })
    expect(resume.json()).toMatchObject({ sides: ['put', 'call'], applied: true })
    expect(await side('ETH', 'put')).toMatchObject({ selling: 'active', signalId: `${id}-r` })
  })

  it('a replayed request is refused with 409 and changes nothing', async () => {
    const id = `sig-${randomUUID()}`
    const body = { id, asset: 'BTC', side: 'call', action: 'pause' }
    const ts = nowSec()
    const raw = JSON.stringify(body)
    const sig = signalSignature(secret, ts, raw)
    expect((await post(body, { ts, sig, raw })).statusCode).toBe(200)
    const replay = await post(body, { ts, sig, raw })
    expect(replay.statusCode).toBe(409)
    expect(replay.json()).toMatchObject({ code: 'SIGNAL_REPLAYED', statusCode: 409 })
    expect(await signalEvents(id)).toHaveLength(1)
  })

  it('tampered, unsigned, wrongly keyed or stale requests are refused with one opaque 401, nothing written', async () => {
    const id = `sig-${randomUUID()}`
    const body = { id, asset: 'ETH', side: 'call', action: 'pause' }
    const raw = JSON.stringify(body)
    const ts = nowSec()
    const tampered = raw.replace('pause', 'resume')
    const stale = String(Number(ts) - 301)
    const cases = [
      post(body, { raw: tampered, sig: signalSignature(secret, ts, raw), ts }),
      post(body, { secret: `${secret}-other` }),
      post(body, { ts: stale }),
      api.app.inject({
        method: 'POST',
        url: '/webhooks/signals',
        headers: { 'content-type': 'application/json' },
        payload: raw,
      }),
    ]
    for (const res of await Promise.all(cases)) {
      expect(res.statusCode).toBe(401)
      expect(res.json()).toEqual({
        statusCode: 401,
        code: 'SIGNAL_REJECTED',
        error: 'Unauthorized',
        message: 'signal signature or timestamp rejected',
      })
    }
    expect(await signalEvents(id)).toHaveLength(0)
    expect(await side('ETH', 'call')).toMatchObject({ selling: 'active' })
  })

  it('a signed but invalid body is a 400 in the error shape; bad JSON too; oversized 413', async () => {
    for (const body of [
      { id: 'x1', asset: 'DOGE', side: 'put', action: 'pause' },
      { id: 'x2', asset: 'ETH', side: 'put', action: 'explode' },
      { id: 'x3', asset: 'ETH', side: 'put', action: 'pause', extra: 1 },
      { asset: 'ETH', side: 'put', action: 'pause' },
    ]) {
      const res = await post(body)
      expect(res.statusCode).toBe(400)
      expect(res.json()).toMatchObject({ statusCode: 400, code: expect.any(String) })
    }
    const bad = await post(null, { raw: '{"id":' })
    expect(bad.statusCode).toBe(400)
    const huge = await post(null, { raw: JSON.stringify({ id: 'big', pad: 'x'.repeat(20_000) }) })
    expect(huge.statusCode).toBe(413)
  })

  it('a late signal older than the stored one is recorded but does not undo the newer decision', async () => {
    const newer = `sig-${randomUUID()}`
    const t = Number(nowSec())
    expect((await post({ id: newer, asset: 'BTC', side: 'put', action: 'pause' }, { ts: String(t) })).statusCode).toBe(
      200,
    )
    const older = `sig-${randomUUID()}`
    const late = await post({ id: older, asset: 'BTC', side: 'put', action: 'resume' }, { ts: String(t - 60) })
    expect(late.json()).toMatchObject({ applied: false })
    expect(await side('BTC', 'put')).toMatchObject({ selling: 'paused', signalId: newer })
    expect(await signalEvents(older)).toHaveLength(1)
  })

  it('GET /trading-config shows the active profile and constants, and nothing secret', async () => {
    const res = await api.app.inject({ method: 'GET', url: '/trading-config' })
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(body.profile.name).toBe(api.ctx.config.tradingProfile)
    expect(body.profile.makerWindowMs).toBe(20 * 60 * 1000)
    expect(body.swaps.ladderBps).toEqual([3, 6, 12, 25, 50, 100])
    expect(body.wheel).toEqual({ retryMs: 60_000, deadlineUtc: '20:00', lockTtlMs: 120_000 })
    expect(body.platformFeeRate).toBe(api.ctx.config.platformFeeRate)
    const text = res.body
    const k = api.ctx.config.keys
    for (const secretValue of [
      api.ctx.config.webhookSecret,
      api.ctx.config.jwtSecret,
      k.masterPrivateKey,
      k.sessionPrivateKey,
      k.gasWalletPrivateKey,
      k.swapWalletPrivateKey,
      k.masterMnemonic,
    ])
      expect(text).not.toContain(secretValue.slice(2, 20))
  })
})
