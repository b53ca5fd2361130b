import { describe, expect, it } from 'vitest'
import { checkNonce, checkSignatureExpiry, NanosecondNonceGenerator, nonceToMs } from './nonce'

const NOW = 1_754_472_862_000 // ms; derive-py's pinned NONCE 1754472862000000000 is this instant in ns
const HOUR = 3_600_000

describe('v3 nonces', () => {
  it('are UTC nanoseconds: 19 digits, ms × 10^6 plus random sub-millisecond digits', () => {
    const g = new NanosecondNonceGenerator(
      () => NOW,
      () => 0.000123,
    )
    const n = g.next()
    expect(n).toBe(1_754_472_862_000_000_123n)
    expect(n.toString()).toHaveLength(19)
    expect(nonceToMs(n)).toBe(NOW)
  })

  it('never repeat or go back within a generator, even when the clock stalls or steps back', () => {
    let t = NOW
    const g = new NanosecondNonceGenerator(
      () => t,
      () => 0.9,
    )
    const a = g.next()
    const b = g.next()
    t -= 1000
    const c = g.next()
    expect(b > a && c > b).toBe(true)
  })

  it('reject millisecond and microsecond nonces (the v2 format)', () => {
    expect(checkNonce('order', 1_754_472_862_000_001n, NOW)).toEqual({ ok: false, reason: 'not_nanoseconds' })
    expect(checkNonce('order', BigInt(NOW) * 1000n, NOW)).toEqual({ ok: false, reason: 'not_nanoseconds' })
  })

  it('orders take a nonce within ±5 minutes (10 minutes and 2 hours old are refused); a withdrawal within an hour, and only if it increases', () => {
    const ns = (ms: number) => BigInt(ms) * 1_000_000n
    const MIN = 60_000
    expect(checkNonce('order', ns(NOW - 4 * MIN), NOW)).toEqual({ ok: true })
    expect(checkNonce('order', ns(NOW + 4 * MIN), NOW)).toEqual({ ok: true })
    expect(checkNonce('order', ns(NOW - 10 * MIN), NOW)).toEqual({ ok: false, reason: 'outside_window' })
    expect(checkNonce('order', ns(NOW - 2 * HOUR), NOW)).toEqual({ ok: false, reason: 'outside_window' })
    expect(checkNonce('withdraw', ns(NOW - 50 * MIN), NOW)).toEqual({ ok: true })
    expect(checkNonce('withdraw', ns(NOW - 2 * HOUR), NOW)).toEqual({ ok: false, reason: 'outside_window' })
    expect(checkNonce('withdraw', ns(NOW), NOW, ns(NOW))).toEqual({ ok: false, reason: 'not_increasing' })
    expect(checkNonce('order', ns(NOW), NOW, ns(NOW))).toEqual({ ok: true })
    expect(checkNonce('vault', ns(NOW - 59 * 24 * HOUR), NOW)).toEqual({ ok: true })
    expect(checkNonce('transfer', ns(NOW + 2 * HOUR), NOW)).toEqual({ ok: false, reason: 'outside_window' })
  })

  it('signature expiry lies between 5 minutes and 120 days ahead (30 days for vaults)', () => {
    const s = BigInt(NOW / 1000)
    expect(checkSignatureExpiry('order', s + 299n, NOW)).toBe(false)
    expect(checkSignatureExpiry('order', s + 300n, NOW)).toBe(true)
    expect(checkSignatureExpiry('withdraw', s + 10_368_000n, NOW)).toBe(true)
    expect(checkSignatureExpiry('withdraw', s + 10_368_001n, NOW)).toBe(false)
    expect(checkSignatureExpiry('vault', s + 31n * 86_400n, NOW)).toBe(false)
  })
})
