import { describe, expect, it } from 'vitest'
import { SIGNAL_WINDOW_MS, signalSignature, verifySignal } from './signals'

const secret = 'a-webhook-secret-of-at-least-32-chars'
const body = '{"id":"s1","asset":"ETH","side":"put","action":"pause"}'
const now = new Date('2026-11-23T12:00:00Z')
const ts = String(now.getTime() / 1000)

describe('verifySignal', () => {
  it('accepts a body signed with the secret and a fresh timestamp', () => {
    const v = verifySignal({ secret, timestamp: ts, signature: signalSignature(secret, ts, body), rawBody: body, now })
    expect(v).toEqual({ ok: true, at: now })
  })

  it('refuses a changed body, another secret, or a signature moved to another timestamp', () => {
    const sig = signalSignature(secret, ts, body)
    expect(verifySignal({ secret, timestamp: ts, signature: sig, rawBody: `${body} `, now })).toMatchObject({
      reason: 'bad signature',
    })
    expect(
      verifySignal({ secret, timestamp: ts, signature: signalSignature(`${secret}x`, ts, body), rawBody: body, now }),
    ).toMatchObject({ reason: 'bad signature' })
    const later = String(Number(ts) + 1)
    expect(verifySignal({ secret, timestamp: later, signature: sig, rawBody: body, now })).toMatchObject({
      reason: 'bad signature',
    })
  })

  it('refuses timestamps outside the window either way, and malformed headers', () => {
    const at = (ms: number) => String(Math.floor((now.getTime() + ms) / 1000))
    for (const t of [at(-SIGNAL_WINDOW_MS - 1000), at(SIGNAL_WINDOW_MS + 1000)]) {
      const v = verifySignal({ secret, timestamp: t, signature: signalSignature(secret, t, body), rawBody: body, now })
      expect(v).toMatchObject({ ok: false, reason: 'stale timestamp' })
    }
    const inside = at(SIGNAL_WINDOW_MS - 1000)
    expect(
      verifySignal({ secret, timestamp: inside, signature: signalSignature(secret, inside, body), rawBody: body, now })
        .ok,
    ).toBe(true)
    expect(verifySignal({ secret, timestamp: undefined, signature: 'x', rawBody: body, now })).toMatchObject({
      reason: 'missing headers',
    })
    expect(verifySignal({ secret, timestamp: '1e9', signature: 'x', rawBody: body, now })).toMatchObject({
      reason: 'bad timestamp',
    })
    expect(verifySignal({ secret, timestamp: ts, signature: 'sha256=00', rawBody: body, now })).toMatchObject({
      reason: 'bad signature',
    })
  })
})
