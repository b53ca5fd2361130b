import { describe, expect, it } from 'vitest'
import { creationOnTopE18, SendOrder } from './movements'
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

describe('creationOnTopE18 (what a creation sends on top of its amount for the fee)', () => {
  const e18 = (n: bigint) => n * 10n ** 18n
  it('USDC at 1: the cap itself; ETH: the cap at the spot price, rounded up to 12 places; no price refused', () => {
    expect(creationOnTopE18(e18(1n), e18(1n), 6)).toBe(e18(1n))
    expect(creationOnTopE18(e18(1n), 999_800_000_000_000_000n, 6)).toBe(1_000_201_000_000_000_000n)
    expect(creationOnTopE18(e18(1n), e18(3000n), 18)).toBe(333_333_334_000_000n)
    expect(() => creationOnTopE18(e18(1n), 0n, 18)).toThrow(/spot price/)
  })
})
