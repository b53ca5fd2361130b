import { describe, expect, it } from 'vitest'
import { blackScholes, normCdf } from './black-scholes'

describe('Black-Scholes', () => {
  it('normCdf matches known values', () => {
    expect(normCdf(0)).toBeCloseTo(0.5, 7)
    expect(normCdf(1.96)).toBeCloseTo(0.975, 3)
    expect(normCdf(-1)).toBeCloseTo(0.158655, 5)
  })

  it('prices an at-the-money call like the textbook and keeps put-call parity', () => {
    const c = blackScholes(100, 100, 1, 0.2, 'C')
    const p = blackScholes(100, 100, 1, 0.2, 'P')
    expect(c.price).toBeCloseTo(7.9656, 3)
    expect(c.price - p.price).toBeCloseTo(0, 9)
    expect(c.delta).toBeCloseTo(0.5398, 3)
    expect(p.delta).toBeCloseTo(c.delta - 1, 9)
  })

  it('an expired option is worth its intrinsic value', () => {
    expect(blackScholes(3100, 3000, 0, 0.6, 'C')).toMatchObject({ price: 100, delta: 1 })
    expect(blackScholes(3100, 3000, 0, 0.6, 'P')).toMatchObject({ price: 0, delta: 0 })
  })
})
