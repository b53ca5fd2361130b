import { describe, expect, it } from 'vitest'
import { nextExpiryAfter, optionName, parseInstrumentName } from './instrument-name'

describe('instrument names', () => {
  it('parses an option and puts its expiry at 08:00 UTC', () => {
    expect(parseInstrumentName('ETH-20260130-3000-C')).toEqual({
      kind: 'option',
      currency: 'ETH',
      expiryDate: '20260130',
      expirySec: Date.UTC(2026, 0, 30, 8) / 1000,
      strike: '3000',
      optionType: 'C',
    })
  })

  it('parses perps and spot, refuses the rest', () => {
    expect(parseInstrumentName('BTC-PERP')).toEqual({ kind: 'perp', currency: 'BTC' })
    expect(parseInstrumentName('ETH-USDC')).toEqual({ kind: 'erc20', currency: 'ETH', quote: 'USDC' })
    for (const bad of ['ETH-20260230-3000-C', 'ETH-2026013-3000-C', 'eth-perp', 'ETH-20260130-3000-X', ''])
      expect(parseInstrumentName(bad), bad).toBeNull()
  })

  it('formats what it parses', () => {
    expect(optionName('ETH', Date.UTC(2026, 0, 30, 8) / 1000, '3000', 'P')).toBe('ETH-20260130-3000-P')
  })

  it('the next expiry is today 08:00 before eight, tomorrow from eight on', () => {
    expect(nextExpiryAfter(Date.UTC(2026, 0, 5, 7, 59))).toBe(Date.UTC(2026, 0, 5, 8) / 1000)
    expect(nextExpiryAfter(Date.UTC(2026, 0, 5, 8))).toBe(Date.UTC(2026, 0, 6, 8) / 1000)
  })
})
