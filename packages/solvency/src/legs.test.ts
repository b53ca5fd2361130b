import { describe, expect, it } from 'vitest'
import { deficitsOf, type Leg, totalsOf } from './legs'

const asset = (currency: string, amount: bigint, kind: Leg['kind'] = 'platform_wallet'): Leg => ({
  side: 'asset',
  currency,
  kind,
  place: 'x',
  amount,
})
const owed = (currency: string, amount: bigint): Leg => ({
  side: 'liability',
  currency,
  kind: 'user_transit',
  place: 'journal',
  amount,
})

describe('solvency arithmetic', () => {
  it('adds legs per currency, sorted, with the surplus signed', () => {
    const totals = totalsOf([
      asset('USDC', 700n),
      owed('USDC', 1_000n),
      asset('USDC', 200n, 'exchange_wallet'),
      asset('ETH', 5n),
      owed('ETH', 3n),
    ])
    expect(totals).toEqual([
      { currency: 'ETH', assets: 5n, liabilities: 3n, surplus: 2n },
      { currency: 'USDC', assets: 900n, liabilities: 1_000n, surplus: -100n },
    ])
  })

  it('a deficit is a shortfall beyond the epsilon; exactly the epsilon is tolerated; no epsilon tolerates nothing', () => {
    const totals = totalsOf([owed('USDC', 100n), owed('ETH', 1n), asset('BTC', 0n)])
    expect(deficitsOf(totals, new Map([['USDC', 100n]])).map((d) => d.currency)).toEqual(['ETH'])
    expect(deficitsOf(totals, new Map([['USDC', 99n]])).map((d) => d.currency)).toEqual(['ETH', 'USDC'])
    expect(
      deficitsOf(
        totals,
        new Map([
          ['ETH', 1n],
          ['USDC', 100n],
        ]),
      ),
    ).toEqual([])
  })
})
