import { E18, fromE18, toE18 } from '@wh/exchange'
import { describe, expect, it } from 'vitest'
import { Catalog } from './catalog'
import { tradeFeeE18 } from './fees'

describe('fees as Derive charges them', () => {
  const catalog = new Catalog()
  catalog.refresh(Date.UTC(2026, 0, 5), () => 3000)
  const option = [...catalog.byName.values()].find((i) => i.type === 'option')!
  const perp = catalog.get('ETH-PERP')!

  it('option taker: $0.50 base plus 0.04% of notional (help-centre example: 2 puts, index 2200 → 2.26)', () => {
    expect(fromE18(tradeFeeE18(option, 'taker', toE18('2'), toE18('2200'), toE18('100'), true))).toBe('2.26')
  })

  it('option fees are capped at 12.5% of the option value', () => {
    // 0.03% of 1 × 3000 = 0.9 > 12.5% of 1 × 0.4 = 0.05
    expect(fromE18(tradeFeeE18(option, 'maker', E18, toE18('3000'), toE18('0.4'), false))).toBe('0.05')
  })

  it('perp taker: $0.10 base plus 0.06% of notional; maker 0.01%', () => {
    expect(fromE18(tradeFeeE18(perp, 'taker', toE18('0.1'), toE18('43000'), toE18('43000'), true))).toBe('2.68')
    expect(fromE18(tradeFeeE18(perp, 'maker', toE18('0.1'), toE18('43000'), toE18('43000'), false))).toBe('0.43')
  })
})
