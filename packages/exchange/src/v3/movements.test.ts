import { describe, expect, it } from 'vitest'
import { creationOnTopE18, SendOrder } from './movements'
import type { SignedV3 } from './port'

const signed = (nonce: bigint): SignedV3 => ({ nonce, signer: '0x0', signature: '0x0', signature_expiry_sec: 0 })

/** Lets every callback already queued run (promise jobs and I/O turns), without waiting for any time to pass. */
const settle = () => new Promise<void>((r) => setImmediate(r))

/** A timer the test fires itself: the send order's wait runs out only when `fire()` says so. */
function manualTimers() {
  const pending = new Set<() => void>()
  const schedule = (fn: () => void) => {
    pending.add(fn)
    return () => pending.delete(fn)
  }
  const fire = () => {
    for (const fn of [...pending]) {
      pending.delete(fn)
      fn()
    }
  }
  return { schedule, fire, pending }
}

/** Whether `p` has settled, read after the queue drained. */
async function isDone(p: Promise<unknown>): Promise<boolean> {
  let done = false
  void p.then(
    () => {
      done = true
    },
    () => {
      done = true
    },
  )
  await settle()
  return done
}

describe('SendOrder (one sender signs again only once its last signature went out)', () => {
  it('a second signature for the sender waits for the first one to be sent; another sender does not wait', async () => {
    const timers = manualTimers()
    const order = new SendOrder(60_000, timers.schedule)
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
    expect(await isDone(second)).toBe(false)
    expect(log).toEqual(['other sender signed'])
    order.sent(first.nonce.toString())
    expect((await second).nonce).toBe(2n)
    expect(log).toEqual(['other sender signed', 'second signed'])
    // a sent signature cancels its wait: only the two never sent (2 and 3) still hold a timer
    expect(timers.pending.size).toBe(2)
  })

  it('a signature never sent holds the next one back only until its wait runs out; a failed signing holds nothing', async () => {
    const timers = manualTimers()
    const order = new SendOrder(30, timers.schedule)
    await order.inTurn(7, async () => signed(1n)) // never sent
    const next = order.inTurn(7, async () => signed(2n))
    expect(await isDone(next)).toBe(false)
    timers.fire() // the wait of signature 1 ran out
    expect((await next).nonce).toBe(2n)
    order.sent('2')
    expect(timers.pending.size).toBe(0)
    await expect(order.inTurn(7, async () => Promise.reject(new Error('no key')))).rejects.toThrow('no key')
    // nothing is fired here: the failed signing released its turn at once
    expect(await isDone(order.inTurn(7, async () => signed(3n)))).toBe(true)
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
