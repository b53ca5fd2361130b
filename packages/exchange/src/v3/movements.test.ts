import { describe, expect, it } from 'vitest'
import { creationTerms, SendOrder } from './movements'
import type { SignedV3 } from './port'

const signed = (nonce: bigint): SignedV3 => ({ nonce, signer: '0x0', signature: '0x0', signature_expiry_sec: 0 })
const tick = () => new Promise((r) => setTimeout(r, 5))

describe('SendOrder (one sender signs again only once its last signature went out)', () => {
  it('a second signature for the sender waits for the first one to be sent; another sender does not wait', async () => {
    const order = new SendOrder(60_000)
    const log: string[] = []
    const first = await order.inTurn(7, async () => signed(1n))
    const second = order.inTurn(7, async () => {
      log.push('second signed')
      return signed(2n)
    })
    await order.inTurn(8, async () => {
      log.push('other sender signed')
      return signed(3n)
    })
    await tick()
    expect(log).toEqual(['other sender signed'])
    order.sent(first.nonce.toString())
    expect((await second).nonce).toBe(2n)
    expect(log).toEqual(['other sender signed', 'second signed'])
  })

  it('a signature never sent holds the next one back only for the wait; a failed signing holds nothing', async () => {
    const order = new SendOrder(30)
    await order.inTurn(7, async () => signed(1n)) // never sent
    const started = Date.now()
    await order.inTurn(7, async () => signed(2n))
    expect(Date.now() - started).toBeGreaterThanOrEqual(25)
    order.sent('2')
    await expect(order.inTurn(7, async () => Promise.reject(new Error('no key')))).rejects.toThrow('no key')
    const again = Date.now()
    await order.inTurn(7, async () => signed(3n))
    expect(Date.now() - again).toBeLessThan(25)
  })
})

describe('creationTerms (a creation sends the fee cap on top of the amount)', () => {
  it('USDC: amount + cap, signed with the cap; a zero cap or another asset keeps the amount and a zero cap', () => {
    expect(creationTerms('1', 'USDC', '50')).toEqual({ amount: '51', max_fee_usd: '1' })
    expect(creationTerms('1.5', 'USDC', '0.25')).toEqual({ amount: '1.75', max_fee_usd: '1.5' })
    expect(creationTerms('0', 'USDC', '50')).toEqual({ amount: '50', max_fee_usd: '0' })
    expect(creationTerms('1', 'ETH', '2')).toEqual({ amount: '2', max_fee_usd: '0' })
  })
})
