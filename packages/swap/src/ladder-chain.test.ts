import { describe, expect, it } from 'vitest'
import { creditedAmount } from './ladder-chain'

describe('creditedAmount: what the user is booked of a swap bought amount', () => {
  it("rounds down to the exchange's finest step; the remainder, under one step, is not the user's", () => {
    const step = 10n ** 6n // ETH at 12 decimals, in wei
    expect(creditedAmount(2_045_223_451_292_417_560n, step)).toBe(2_045_223_451_292_000_000n)
    expect(creditedAmount(2_045_223_451_292_000_000n, step)).toBe(2_045_223_451_292_000_000n)
    expect(creditedAmount(999_999n, step)).toBe(0n)
  })

  it('takes all of it with a step of 1 (the default), and refuses a step that is not positive', () => {
    expect(creditedAmount(123_456_789n)).toBe(123_456_789n)
    expect(creditedAmount(123_456_789n, 1n)).toBe(123_456_789n)
    expect(() => creditedAmount(1n, 0n)).toThrow(RangeError)
    expect(() => creditedAmount(1n, -5n)).toThrow(RangeError)
  })
})
