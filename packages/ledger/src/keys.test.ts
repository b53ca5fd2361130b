import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  accrualKey,
  capitalKey,
  capitalReference,
  chainEventKey,
  minuteBucket,
  ownTxKey,
  parseCapitalReference,
  reconcileAdjustmentKey,
  reconcileStopKey,
  releaseKey,
  settlementKey,
  stopKey,
  subaccountFundedKey,
  tradeKey,
} from './keys'

const tx = `0x${'ab'.repeat(32)}`

describe('idempotency keys (spec 6.1)', () => {
  it('builds every shape of the table', () => {
    expect(tradeKey('T-1')).toBe('T-1')
    expect(chainEventKey({ chain: 'base', txHash: tx, logIndex: 7 })).toBe(`tx:base:${tx}:7`)
    expect(accrualKey({ subaccountId: '9', type: 'interest', bucketTs: 1_700_000_000 })).toBe(
      'accrual:9:interest:1700000000',
    )
    expect(settlementKey({ subaccountId: '9', instrument: 'ETH-1-P', expirySec: 1_700_000_000 })).toBe(
      '9:ETH-1-P:1700000000',
    )
    expect(subaccountFundedKey('abc')).toBe('subaccount_funded:abc')
    expect(releaseKey('r1')).toBe('release:r1')
    expect(stopKey({ subaccountId: '9', minuteBucket: 120 })).toBe('stop:9:120')
  })

  it('a transaction the service sent itself: slot 0, and a second event about it slot 1; both kept apart', () => {
    const first = ownTxKey({ chain: 'base', txHash: tx, slot: 0 })
    const second = ownTxKey({ chain: 'base', txHash: tx, slot: 1 })
    expect(first).toBe(`tx:base:${tx}:0`)
    expect(second).toBe(`tx:base:${tx}:1`)
    expect(first).not.toBe(second)
    expect(() => ownTxKey({ chain: 'base', txHash: tx, slot: 2 as 0 })).toThrow()
  })

  it('one transaction gives one key whatever the case of its hash', () => {
    expect(chainEventKey({ chain: 'base', txHash: tx.toUpperCase().replace('0X', '0x'), logIndex: 1 })).toBe(
      chainEventKey({ chain: 'base', txHash: tx, logIndex: 1 }),
    )
  })

  it('the reconciliation adjustment key carries the delta: two deltas in one bucket, two keys', () => {
    const a = reconcileAdjustmentKey({ subaccountId: '9', account: 'acct', bucket: 60, delta: 5n })
    const b = reconcileAdjustmentKey({ subaccountId: '9', account: 'acct', bucket: 60, delta: -5n })
    expect(a).toBe('reconcile:9:acct:60:5')
    expect(b).toBe('reconcile:9:acct:60:-5')
    expect(() => reconcileAdjustmentKey({ subaccountId: '9', account: 'acct', bucket: 60, delta: 0n })).toThrow()
  })

  it('stop raised by reconciliation: same contents (any order) same key, different contents different keys', () => {
    const divergence = fc.record({ account: fc.stringMatching(/^[a-z:0-9]{1,20}$/), delta: fc.bigInt() })
    fc.assert(
      fc.property(fc.uniqueArray(divergence, { minLength: 1, maxLength: 6, selector: (d) => d.account }), (ds) => {
        const key = reconcileStopKey({ subaccountId: '9', bucket: 60, divergences: ds })
        expect(key).toMatch(/^reconcile:9:stop:60:[0-9a-f]{32}$/)
        expect(reconcileStopKey({ subaccountId: '9', bucket: 60, divergences: [...ds].reverse() })).toBe(key)
        const changed = ds.map((d, i) => (i === 0 ? { ...d, delta: d.delta + 1n } : d))
        expect(reconcileStopKey({ subaccountId: '9', bucket: 60, divergences: changed })).not.toBe(key)
        if (ds.length > 1)
          expect(reconcileStopKey({ subaccountId: '9', bucket: 60, divergences: ds.slice(1) })).not.toBe(key)
      }),
    )
  })

  it('keeps the reconciliation stop shape apart from the adjustment shape', () => {
    const stop = reconcileStopKey({ subaccountId: '9', bucket: 60, divergences: [{ account: 'a', delta: 1n }] })
    expect(stop.split(':')[2]).toBe('stop')
  })

  it('minute buckets are epoch seconds at the start of the minute, and stop keys accept only those', () => {
    expect(minuteBucket(new Date('2026-01-01T00:01:59.999Z'))).toBe(Date.UTC(2026, 0, 1, 0, 1) / 1000)
    expect(() => stopKey({ subaccountId: '9', minuteBucket: 61 })).toThrow()
  })

  it('refuses empty or spaced parts', () => {
    expect(() => tradeKey('')).toThrow()
    expect(() => releaseKey('a b')).toThrow()
    expect(() => chainEventKey({ chain: 'base', txHash: '0x12', logIndex: 0 })).toThrow()
  })

  it('a capital movement has one reference, whatever the case it was typed in; any other spelling is no key', () => {
    const upper = `0x${'AB'.repeat(32)}`
    for (const typed of [`tx:1:${tx}`, `tx:1:${upper}`, `TX:1:${upper}`, ` tx:1:${tx} `])
      expect(capitalReference(parseCapitalReference(typed) as never), typed).toBe(`tx:1:${tx}`)
    for (const typed of ['treasury:Wire-2026-01-05:1', 'TREASURY:wire-2026-01-05:1'])
      expect(capitalReference(parseCapitalReference(typed) as never), typed).toBe('treasury:wire-2026-01-05:1')
    for (const typed of [tx, `tx:ethereum:${tx}`, `tx:0:${tx}`, 'tx:1:0xabc', 'wire-1', 'treasury:', 'treasury:a b'])
      expect(parseCapitalReference(typed), typed).toBeUndefined()
    expect(capitalKey('contributed', `tx:1:${tx}`)).toBe(`capital_contributed:tx:1:${tx}`)
    for (const reference of [`tx:1:${upper}`, 'treasury:Wire-1', `ethereum:${tx}`, 'test:abc'])
      expect(() => capitalKey('contributed', reference), reference).toThrow(/capital reference/)
  })
})
