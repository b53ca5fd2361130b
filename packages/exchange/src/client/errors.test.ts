import { describe, expect, it } from 'vitest'
import { errorFromRpc } from './errors'

/** Derive's codes as its catalog numbers them (docs/exchange.md "Error codes"), written out, not taken from RPC. */
const kind = (code: number, message = 'x') => errorFromRpc('private/x', { code, message, data: null }).code

describe("the client's reading of Derive's error codes", () => {
  it('12000 asset, 12001 instrument, 12002 currency: the name is not listed', () => {
    for (const c of [12000, 12001, 12002]) expect(kind(c)).toBe('EXCHANGE_UNKNOWN_INSTRUMENT')
  })
  it('13000 is a subscription of only invalid channels: the request is wrong, nothing about an instrument', () => {
    expect(kind(13000)).toBe('EXCHANGE_REQUEST_REJECTED')
  })
  it('the 14xxx of the key (14020 wallet mismatch, 14026 unknown, 14030 expired, 14031 scope) are auth; 14001 is not', () => {
    for (const c of [14000, 14014, 14020, 14021, 14023, 14026, 14030, 14031, 14039])
      expect(kind(c)).toBe('EXCHANGE_AUTH')
    expect(kind(14001)).toBe('EXCHANGE_REQUEST_REJECTED')
  })
  it('-32000 and -32100 are rate limits (retryable); 11018, 11023 and 11033 refuse the order or movement', () => {
    expect(kind(-32000)).toBe('EXCHANGE_RATE_LIMITED')
    expect(kind(-32100)).toBe('EXCHANGE_RATE_LIMITED')
    for (const c of [11018, 11023, 11033]) expect(kind(c)).toBe('EXCHANGE_ORDER_REJECTED')
  })
})
