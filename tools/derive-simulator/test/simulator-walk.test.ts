/**
 * Prices move in the local run: a wall-clock simulator with a walk steps every index on a seeded
 * random walk, seen over its v3 wire (public/get_ticker's index `I`); without one, prices stay
 * where they are. A wall-clock simulator also re-sends every subscribed ticker once a second
 * (TICKER_HEARTBEAT_MS), moved or not, with the time of the push; a manual clock pushes only when
 * the control API moves something.
 */
import { describe, expect, it, vi } from 'vitest'
import WebSocket from 'ws'
import { priceWalk } from '../src/market'
import { type RunningSimulator, startDeriveSimulator, TICKER_HEARTBEAT_MS } from '../src/server'

async function indexOf(sim: RunningSimulator, instrument: string): Promise<string> {
  const res = await fetch(`${sim.v3HttpUrl}/public/get_ticker`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ instrument_name: instrument }),
  })
  const body = (await res.json()) as { result: { I: string } }
  return body.result.I
}

/** The slim tickers a fresh v3 socket subscribed to `channel` receives: index `I` and time `t` of each push. */
async function subscribed(sim: RunningSimulator, channel: string) {
  const ws = new WebSocket(sim.v3WsUrl)
  await new Promise((r, j) => {
    ws.once('open', r)
    ws.once('error', j)
  })
  const pushes: { I: string; t: number }[] = []
  ws.on('message', (m) => {
    const f = JSON.parse(String(m)) as {
      params?: { channel: string; data: { instrument_ticker: { I: string; t: number } } }
    }
    if (f.params?.channel === channel) pushes.push(f.params.data.instrument_ticker)
  })
  ws.send(JSON.stringify({ id: 1, method: 'subscribe', params: { channels: [channel] } }))
  return { pushes, close: () => ws.close() }
}

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
      // read both until the walking one has shown four prices (state, bounded), not for a duration
      await vi.waitFor(
        async () => {
          seen.add(await indexOf(walking, 'ETH-PERP'))
          stillSeen.add(await indexOf(still, 'ETH-PERP'))
          expect(seen.size).toBeGreaterThan(3)
        },
        { timeout: 10_000, interval: 20 },
      )
      expect([...stillSeen]).toEqual(['3000'])
    } finally {
      await Promise.all([walking.close(), still.close()])
    }
  })
})

describe('the ticker heartbeat', () => {
  it('a wall-clock simulator re-sends an unmoved ticker every second with the time of the push; a manual clock does not', async () => {
    const wall = await startDeriveSimulator({ chainId: 901, clock: 'wall' })
    const manual = await startDeriveSimulator({ chainId: 901 })
    const channel = 'ticker_slim.ETH-PERP.1000'
    const beating = await subscribed(wall, channel)
    const quiet = await subscribed(manual, channel)
    try {
      await expect.poll(() => beating.pushes.length, { timeout: 4 * TICKER_HEARTBEAT_MS }).toBeGreaterThanOrEqual(3)
      expect(new Set(beating.pushes.map((p) => p.I))).toEqual(new Set(['3000']))
      const times = beating.pushes.map((p) => p.t)
      for (let i = 1; i < times.length; i++) expect(times[i]!).toBeGreaterThan(times[i - 1]!)
      // the manual clock: the subscription's own snapshot only, until the control API moves a price
      expect(quiet.pushes).toHaveLength(1)
      manual.control.setPrice('ETH', '3010')
      await expect.poll(() => quiet.pushes.map((p) => p.I)).toEqual(['3000', '3010'])
    } finally {
      beating.close()
      quiet.close()
      await Promise.all([wall.close(), manual.close()])
    }
  })
})
