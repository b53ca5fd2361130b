import { capitalReference } from '@wh/ledger'
import { describe, expect, it } from 'vitest'
import { capitalMovementOf } from './capital-args'

const hash = `0x${'ab'.repeat(32)}`
const args = (reference: string) => ({
  contribute: true,
  holding: 'hot',
  chain: 'ethereum',
  currency: 'USDC',
  amount: '50000',
  reference,
  reason: ' hot wallet float ',
})

describe("the capital CLI's arguments", () => {
  it('one transaction typed two ways is one movement, with one reference', () => {
    const lower = capitalMovementOf(args(`tx:1:${hash}`))
    const upper = capitalMovementOf(args(`TX:1:${hash.toUpperCase().replace('0X', '0x')}`))
    expect(lower).toMatchObject({ direction: 'contributed', amount: 50_000_000_000n, reason: 'hot wallet float' })
    if ('usage' in lower || 'usage' in upper) throw new Error('refused')
    expect(capitalReference(upper.reference)).toBe(`tx:1:${hash}`)
    expect(capitalReference(lower.reference)).toBe(capitalReference(upper.reference))
  })

  it('a reference that is neither a transaction nor a treasury reference is refused, as is the rest of bad usage', () => {
    for (const reference of [hash, `ethereum:${hash}`, 'wire 12', ''])
      expect(capitalMovementOf(args(reference)), reference).toHaveProperty('usage')
    expect(capitalMovementOf({ ...args(`tx:1:${hash}`), withdraw: true })).toHaveProperty('usage')
    expect(capitalMovementOf({ ...args(`tx:1:${hash}`), amount: '0.0000001' })).toHaveProperty('usage')
    expect(capitalMovementOf({ ...args(`tx:1:${hash}`), reason: ' ' })).toHaveProperty('usage')
  })
})
