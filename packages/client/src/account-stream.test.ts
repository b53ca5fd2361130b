import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { FakeSocket } from '../test/fake-socket.js'
import { openAccountStream } from './account-stream.js'
import type { AccountEventMessage } from './types.js'

const last = () => FakeSocket.all.at(-1) as FakeSocket
const event = (seq: number): AccountEventMessage => ({
  type: 'event',
  seq,
  kind: 'deposit.credited',
  at: '2026-01-01T00:00:00.000Z',
  unit: 'base_units',
  data: { amount: String(seq) },
})
const snapshot = (seq: number) => ({ type: 'snapshot', seq, balances: [], positions: [], wheels: [] })

beforeEach(() => {
  FakeSocket.all = []
  vi.useFakeTimers()
})
afterEach(() => vi.useRealTimers())

function stream(token: string | (() => string) = 't1') {
  const events: number[] = []
  const snaps: number[] = []
  const authFailed: number[] = []
  const s = openAccountStream({
    baseUrl: 'https://api.test',
    token,
    connect: (url) => new FakeSocket(url),
    onEvent: (e) => events.push(e.seq),
    onSnapshot: (m) => snaps.push(m.seq),
    onAuthFailed: (code) => authFailed.push(code),
    staleAfterMs: 1_000,
  })
  return { s, events, snaps, authFailed }
}

describe('openAccountStream', () => {
  it('authenticates by its first message, never the URL, then subscribes for a snapshot', () => {
    const { s, snaps, events } = stream('secret-token')
    const sock = last()
    expect(sock.url).toBe('wss://api.test/ws/account')
    sock.open()
    expect(sock.sent).toEqual([{ type: 'auth', token: 'secret-token' }, { type: 'subscribe' }])
    sock.push(snapshot(4))
    sock.push(event(5))
    sock.push(event(5)) // a repeat: dropped
    sock.push(event(6))
    expect(snaps).toEqual([4])
    expect(events).toEqual([5, 6])
    expect(s.lastSeq).toBe(6)
    s.close()
  })

  it('reconnects after a drop and resubscribes from the last seq it saw, with the current token', () => {
    let token = 'first'
    const { s, events } = stream(() => token)
    last().open()
    last().push(snapshot(0))
    last().push(event(1))
    last().push(event(2))
    last().drop()
    token = 'renewed'
    vi.advanceTimersByTime(250)
    expect(FakeSocket.all).toHaveLength(2)
    last().open()
    expect(last().sent).toEqual([
      { type: 'auth', token: 'renewed' },
      { type: 'subscribe', fromSeq: 2 },
    ])
    // the server replays 3 and 4, then live 5
    for (const n of [3, 4, 5]) last().push(event(n))
    expect(events).toEqual([1, 2, 3, 4, 5])
    expect(s.stats.reconnects).toBe(1)
    s.close()
  })

  it('a gap reconnects from the last seq handed over; the skipped event is not passed on', () => {
    const { s, events } = stream()
    last().open()
    last().push(snapshot(10))
    last().push(event(11))
    last().push(event(13))
    expect(events).toEqual([11])
    expect(FakeSocket.all[0]?.closed).toBe(true)
    vi.advanceTimersByTime(250)
    last().open()
    expect(last().sent[1]).toEqual({ type: 'subscribe', fromSeq: 11 })
    expect(s.stats.gaps).toBe(1)
    s.close()
  })

  it('a resnapshot asks for a snapshot on the same connection', () => {
    const { s, snaps } = stream()
    const sock = last()
    sock.open()
    sock.push(snapshot(3))
    sock.drop()
    vi.advanceTimersByTime(250)
    last().open()
    last().push({ type: 'resnapshot', reason: 'too_old', latestSeq: 9000, message: 'resnapshot' })
    expect(last().sent.at(-1)).toEqual({ type: 'subscribe' })
    last().push(snapshot(9000))
    expect(snaps).toEqual([3, 9000])
    expect(s.lastSeq).toBe(9000)
    expect(s.stats.resnapshots).toBe(1)
    s.close()
  })

  it('a refused token (4401) closes the stream for good; silence reopens it', () => {
    const a = stream()
    last().open()
    last().drop(4401, 'invalid or expired token')
    vi.advanceTimersByTime(60_000)
    expect(FakeSocket.all).toHaveLength(1)
    expect(a.authFailed).toEqual([4401])

    FakeSocket.all = []
    const b = stream()
    last().open()
    last().push(snapshot(0))
    vi.advanceTimersByTime(1_000)
    expect(FakeSocket.all[0]?.closed).toBe(true)
    vi.advanceTimersByTime(250)
    expect(FakeSocket.all).toHaveLength(2)
    b.s.close()
  })
})
