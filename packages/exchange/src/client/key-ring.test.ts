import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { describe, expect, it } from 'vitest'
import { KEY_MIN_REMAINING_SEC, KeyRing } from './key-ring'

const NOW = 1_800_000_000_000
const sec = (ms: number) => Math.floor(ms / 1000)

describe('a duty key ring (a renewal: the current key and its successor)', () => {
  const current = generatePrivateKey()
  const next = generatePrivateKey()
  const a = privateKeyToAccount(current).address
  const b = privateKeyToAccount(next).address

  it('before anything is read it signs with the first key, and reads when it holds two', () => {
    const ring = new KeyRing([current, next])
    expect(ring.pick(NOW).address).toBe(a)
    expect(ring.stale(NOW)).toBe(true)
    expect(new KeyRing(current).stale(NOW)).toBe(false) // one key: nothing to choose
  })

  it('signs with the registered key that lives longest; an unregistered successor waits', () => {
    const ring = new KeyRing([current, next])
    ring.learn([{ address: a, expirySec: sec(NOW) + 86_400 }], NOW)
    expect(ring.pick(NOW).address).toBe(a)
    ring.learn(
      [
        { address: a, expirySec: sec(NOW) + 86_400 },
        { address: b, expirySec: sec(NOW) + 90 * 86_400 },
      ],
      NOW,
    )
    expect(ring.pick(NOW).address).toBe(b)
    expect(ring.expiryOf(b)).toBe(sec(NOW) + 90 * 86_400)
  })

  it('never a key in its last minutes: the other one, if it still has time', () => {
    const ring = new KeyRing([current, next])
    ring.learn(
      [
        { address: a, expirySec: sec(NOW) + KEY_MIN_REMAINING_SEC - 1 },
        { address: b, expirySec: sec(NOW) + 3_600 },
      ],
      NOW,
    )
    expect(ring.pick(NOW).address).toBe(b)
  })

  it('reads again after refreshMs, or at once once invalidated (a refusal named the key)', () => {
    const ring = new KeyRing([current, next], 300_000)
    ring.learn([], NOW)
    expect(ring.stale(NOW + 299_999)).toBe(false)
    expect(ring.stale(NOW + 300_000)).toBe(true)
    ring.learn([], NOW)
    ring.invalidate()
    expect(ring.stale(NOW)).toBe(true)
  })
})
