/**
 * Prices move in the local run: a wall-clock simulator with a walk steps every index on a seeded
 * random walk, seen over its real wire (public/get_ticker); without one, prices stay where they are.
 */
import { describe, expect, it } from 'vitest'
import { priceWalk } from '../src/simulator/market'
import { startDeriveSimulator } from '../src/simulator/server'

async function indexOf(httpUrl: string, instrument: string): Promise<string> {
  const res = await fetch(`${httpUrl}/public/get_ticker`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ instrument_name: instrument }),
  })
  const body = (await res.json()) as { result: { index_price: string } }
  return body.result.index_price
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe('the price walk', () => {
  it('is a function of its seed: the same seed replays the same path, another does not', () => {
    const path = (seed: number) => {
      const step = priceWalk(seed, 0.8)
      const out: bigint[] = []
      let p = 3000n * 10n ** 18n
      for (let i = 0; i < 50; i++) {
        p = step(p, 2_000)
        out.push(p)
      }
      return out
    }
    expect(path(1)).toEqual(path(1))
    expect(path(2)).not.toEqual(path(1))
    // steps of 2 s at 80% a year move ETH by cents to a few dollars, never by a large jump
    const moves = path(1).map((p, i, a) => (i === 0 ? 0n : p > a[i - 1]! ? p - a[i - 1]! : a[i - 1]! - p))
    expect(moves.slice(1).every((m) => m < 20n * 10n ** 18n)).toBe(true)
    expect(moves.slice(1).some((m) => m > 0n)).toBe(true)
  })

  it('moves the index a wall-clock simulator quotes, and leaves it alone without a walk', async () => {
    const walking = await startDeriveSimulator({
      chainId: 901,
      clock: 'wall',
      walk: { intervalMs: 20, annualVolatility: 5, seed: 7 },
    })
    const still = await startDeriveSimulator({ chainId: 901, clock: 'wall' })
    try {
      const seen = new Set<string>()
      const stillSeen = new Set<string>()
      for (let i = 0; i < 10; i++) {
        seen.add(await indexOf(walking.httpUrl, 'ETH-PERP'))
        stillSeen.add(await indexOf(still.httpUrl, 'ETH-PERP'))
        await sleep(30)
      }
      expect(seen.size).toBeGreaterThan(3)
      expect([...stillSeen]).toEqual(['3000'])
    } finally {
      await Promise.all([walking.close(), still.close()])
    }
  })
})
