import { describe, expect, it } from 'vitest'
import { NonceGenerator, nonceTimestampMs } from './nonce'

describe('action nonces', () => {
  it('are the millisecond time followed by three random digits', () => {
    const g = new NonceGenerator(
      () => 1695836058725,
      () => 0.001,
    )
    expect(g.next()).toBe(1695836058725001n)
    expect(nonceTimestampMs(1695836058725001n)).toBe(1695836058725)
  })

  it('never repeat or go backwards within one generator, even in the same millisecond', () => {
    const g = new NonceGenerator(
      () => 1_700_000_000_000,
      () => 0.5,
    )
    const seen = [g.next(), g.next(), g.next()]
    expect(new Set(seen).size).toBe(3)
    expect(seen[1]! > seen[0]! && seen[2]! > seen[1]!).toBe(true)
  })

  it('stay below 2^53 so a JSON number carries them exactly', () => {
    const g = new NonceGenerator(() => Date.UTC(2100, 0, 1))
    expect(g.next() < 2n ** 53n).toBe(true)
  })
})
