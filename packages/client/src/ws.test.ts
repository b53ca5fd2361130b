import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { FakeSocket } from '../test/fake-socket.js'
import type { PriceUpdate, StrategyEvent, StrategyState } from './types.js'
import { openPriceStream, openStrategyStream, type SequenceGap } from './ws.js'

const price = (asset: string, seq: number): PriceUpdate => ({
  type: 'price',
  asset,
  seq,
  ts: '2026-01-01T00:00:00.000Z',
  publishedAt: '2026-01-01T00:00:00.000Z',
  index: '3000',
  mark: '3000',
  atmIv: null,
  instruments: [],
})

const last = () => FakeSocket.all.at(-1)!

beforeEach(() => {
  FakeSocket.all = []
  vi.useFakeTimers()
})
afterEach(() => vi.useRealTimers())

function prices(onGap?: (g: SequenceGap) => void) {
  const events: PriceUpdate[] = []
  const snaps: PriceUpdate[] = []
  const stream = openPriceStream({
    baseUrl: 'http://api.test:3000',
    assets: ['eth'],
    connect: (url) => new FakeSocket(url),
    onEvent: (e) => events.push(e),
    onSnapshot: (s) => snaps.push(s),
    onGap,
    initialDelayMs: 100,
    maxDelayMs: 400,
    staleAfterMs: 0,
  })
  return { stream, events, snaps }
}

describe('price stream', () => {
  it('connects with the assets asked for and delivers the snapshot, then updates in order', () => {
    const { stream, events, snaps } = prices()
    expect(last().url).toBe('ws://api.test:3000/ws/prices?assets=ETH')
    last().open()
    last().push({ type: 'snapshot', channel: 'prices', updates: [price('ETH', 5)] })
    last().push(price('ETH', 6))
    last().push(price('ETH', 7))
    expect(snaps.map((s) => s.seq)).toEqual([5])
    expect(events.map((e) => e.seq)).toEqual([6, 7])
    expect(stream.lastSeq('eth')).toBe(7)
    stream.close()
  })

  it('drops repeats and updates older than the snapshot', () => {
    const { stream, events } = prices()
    last().open()
    last().push({ type: 'snapshot', channel: 'prices', updates: [price('ETH', 5)] })
    last().push(price('ETH', 5))
    last().push(price('ETH', 4))
    last().push(price('ETH', 6))
    last().push(price('ETH', 6))
    expect(events.map((e) => e.seq)).toEqual([6])
    stream.close()
  })

  it('a sequence gap is reported and triggers one resnapshot by resubscribing the asset', () => {
    const gaps: SequenceGap[] = []
    const { stream, events, snaps } = prices((g) => gaps.push(g))
    const s = last()
    s.open()
    s.push({ type: 'snapshot', channel: 'prices', updates: [price('ETH', 1)] })
    s.push(price('ETH', 2))
    s.push(price('ETH', 5)) // 3 and 4 lost
    s.push(price('ETH', 7)) // another gap while the resnapshot is in flight: no second resubscribe
    expect(gaps).toEqual([
      { asset: 'ETH', expected: 3, received: 5 },
      { asset: 'ETH', expected: 6, received: 7 },
    ])
    expect(s.sent).toEqual([
      { type: 'unsubscribe', assets: ['ETH'] },
      { type: 'subscribe', assets: ['ETH'] },
    ])
    // the server answers the subscribe with a snapshot; updates continue from it
    s.push({ type: 'snapshot', channel: 'prices', updates: [price('ETH', 8)] })
    s.push({ type: 'subscribed', channel: 'prices', assets: ['ETH'] })
    s.push(price('ETH', 9))
    expect(snaps.map((x) => x.seq)).toEqual([1, 8])
    expect(events.map((e) => e.seq)).toEqual([2, 5, 7, 9])
    expect(stream.stats.gaps).toBe(2)
    // resync over: a later gap resubscribes again
    s.push(price('ETH', 11))
    expect(s.sent).toHaveLength(4)
    stream.close()
  })

  it('reconnects with backoff and resubscribes everything wanted, including assets added later', () => {
    const statuses: string[] = []
    const stream = openPriceStream({
      baseUrl: 'https://api.test',
      assets: ['ETH'],
      connect: (url) => new FakeSocket(url),
      onStatus: (s) => statuses.push(s),
      initialDelayMs: 100,
      maxDelayMs: 400,
      staleAfterMs: 0,
    })
    last().open()
    stream.subscribe(['BTC'])
    expect(last().sent).toEqual([{ type: 'subscribe', assets: ['BTC'] }])
    last().drop()
    expect(FakeSocket.all).toHaveLength(1)
    vi.advanceTimersByTime(99)
    expect(FakeSocket.all).toHaveLength(1)
    vi.advanceTimersByTime(1)
    expect(last().url).toBe('wss://api.test/ws/prices?assets=ETH%2CBTC')
    // a failed attempt doubles the delay (100 → 200 → 400 → 400: bounded)
    last().drop()
    vi.advanceTimersByTime(199)
    expect(FakeSocket.all).toHaveLength(2)
    vi.advanceTimersByTime(1)
    expect(FakeSocket.all).toHaveLength(3)
    last().open()
    expect(statuses).toEqual([
      'connecting',
      'open',
      'reconnecting',
      'reconnecting',
      'reconnecting',
      'reconnecting',
      'open',
    ])
    // after a reconnect the snapshot starts the count afresh (no false gap against the old seq)
    stream.close()
    expect(last().closed).toBe(true)
    vi.advanceTimersByTime(10_000)
    expect(FakeSocket.all).toHaveLength(3)
  })

  it('a silent connection is closed and reopened', () => {
    const stream = openPriceStream({
      baseUrl: 'http://api.test',
      assets: ['ETH'],
      connect: (url) => new FakeSocket(url),
      initialDelayMs: 10,
      staleAfterMs: 1_000,
    })
    last().open()
    vi.advanceTimersByTime(900)
    last().push({ type: 'heartbeat', ts: '2026-01-01T00:00:00.000Z' })
    vi.advanceTimersByTime(900)
    expect(FakeSocket.all).toHaveLength(1)
    vi.advanceTimersByTime(100)
    expect(FakeSocket.all[0]!.closed).toBe(true)
    vi.advanceTimersByTime(10)
    expect(FakeSocket.all).toHaveLength(2)
    stream.close()
  })

  it('ignores updates of assets it does not want and reports server errors', () => {
    const errors: string[] = []
    const events: PriceUpdate[] = []
    const stream = openPriceStream({
      baseUrl: 'http://api.test',
      assets: ['ETH'],
      connect: (url) => new FakeSocket(url),
      onEvent: (e) => events.push(e),
      onServerError: (e) => errors.push(e.code),
      staleAfterMs: 0,
    })
    last().open()
    last().push(price('BTC', 1))
    last().push({ type: 'error', code: 'UNKNOWN_ASSET', message: 'unknown asset X' })
    stream.unsubscribe(['ETH'])
    last().push(price('ETH', 1))
    expect(events).toEqual([])
    expect(errors).toEqual(['UNKNOWN_ASSET'])
    stream.close()
  })
})

describe('strategy stream', () => {
  const state = (asset: string, seq: number): StrategyState => ({
    type: 'strategy_state',
    asset,
    seq,
    ts: '2026-01-01T00:00:00.000Z',
    strategies: [],
    signals: { put: 'active', call: 'active' },
  })
  const event = (asset: string, seq: number) =>
    ({
      type: 'strategy',
      asset,
      seq,
      ts: '2026-01-01T00:00:00.000Z',
      event: 'signal',
      sides: ['put'],
      action: 'pause',
      reason: null,
    }) as unknown as StrategyEvent

  it('a state snapshot with seq 0 is followed by event 1; a gap resnapshots', () => {
    const states: StrategyState[] = []
    const events: StrategyEvent[] = []
    const stream = openStrategyStream({
      baseUrl: 'http://api.test',
      assets: ['ETH'],
      connect: (url) => new FakeSocket(url),
      onSnapshot: (s) => states.push(s),
      onEvent: (e) => events.push(e),
      staleAfterMs: 0,
    })
    expect(last().url).toBe('ws://api.test/ws/strategies?assets=ETH')
    last().open()
    last().push({ type: 'snapshot', channel: 'strategies', states: [state('ETH', 0)] })
    last().push(event('ETH', 1))
    last().push(event('ETH', 3))
    expect(events.map((e) => e.seq)).toEqual([1, 3])
    expect(last().sent).toEqual([
      { type: 'unsubscribe', assets: ['ETH'] },
      { type: 'subscribe', assets: ['ETH'] },
    ])
    last().push({ type: 'snapshot', channel: 'strategies', states: [state('ETH', 3)] })
    expect(states.map((s) => s.seq)).toEqual([0, 3])
    stream.close()
  })
})
