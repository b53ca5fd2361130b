import { describe, expect, it } from 'vitest'
import {
  buyBackQuote,
  CLOSE_LIMIT_TOLERANCE_BPS,
  closeLimitOf,
  costUsdcUp,
  E18,
  quotedPriceOf,
  roundDownToTick,
} from './placing'

const at = new Date('2026-11-23T09:00:00Z')
const tick = E18 / 10n

describe('buy-back quote (docs/trading.md "Buying a leg back")', () => {
  it('quotes the best ask, the limit 2 % above it, the cost rounded up to the USDC unit', () => {
    const q = buyBackQuote({ askE18: 12n * E18, markE18: 11n * E18, tickE18: tick }, (3n * E18) / 10n, at)
    expect(CLOSE_LIMIT_TOLERANCE_BPS).toBe(200)
    expect(q).toEqual({
      priceE18: 12n * E18,
      limitE18: (1224n * E18) / 100n,
      amountE18: (3n * E18) / 10n,
      cost: 3_600_000n,
      quotedAt: at,
    })
  })

  it('without an ask: the mark plus 5 %, rounded up to the tick; nothing without a mark either', () => {
    const q = buyBackQuote({ askE18: 0n, markE18: (101n * E18) / 10n, tickE18: tick }, E18, at)
    // 10.1 × 1.05 = 10.605 → 10.7 on a 0.1 tick
    expect(q?.priceE18).toBe((107n * E18) / 10n)
    expect(buyBackQuote({ askE18: 0n, markE18: 0n, tickE18: tick }, E18, at)).toBeUndefined()
    expect(buyBackQuote({ askE18: E18, markE18: E18, tickE18: tick }, 0n, at)).toBeUndefined()
  })

  it('the quoted price reads back exactly from the stored limit, and the order limit stays ≥ the price', () => {
    for (const t of [10n ** 14n, 10n ** 16n, E18 / 10n, E18 / 20n])
      for (const ticks of [1n, 7n, 49n, 51n, 333n, 12_345n, 9_999_999n]) {
        const q = buyBackQuote({ askE18: ticks * t, markE18: 0n, tickE18: t }, E18, at)
        if (!q) throw new Error('no quote')
        expect(quotedPriceOf(q.limitE18)).toBe(q.priceE18)
        expect(closeLimitOf(q.priceE18)).toBe(q.limitE18)
        const orderLimit = roundDownToTick(q.limitE18, t)
        expect(orderLimit >= q.priceE18 && orderLimit <= q.limitE18).toBe(true)
      }
  })

  it('a cost is never below what the exchange debits (rounded up to the unit)', () => {
    expect(costUsdcUp(E18 / 3n, E18)).toBe(333_334n)
    expect(costUsdcUp(E18, E18)).toBe(1_000_000n)
    for (const a of [1n, 3n, E18 / 7n, E18, 123n * E18 + 1n])
      for (const p of [1n, E18 / 3n, 12n * E18 + 5n, 10n ** 23n]) {
        const c = costUsdcUp(a, p)
        const exact = a * p // e36 USD; one USDC base unit is 1e30 of it
        expect(c * 10n ** 30n >= exact && (c - 1n) * 10n ** 30n < exact).toBe(true)
      }
  })
})
