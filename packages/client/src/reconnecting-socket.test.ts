import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { FakeSocket } from '../test/fake-socket.js'
import { ReconnectingSocket, type ReconnectingSocketHandlers, type StreamStatus } from './reconnecting-socket.js'

const last = () => FakeSocket.all.at(-1) as FakeSocket

beforeEach(() => {
  FakeSocket.all = []
  vi.useFakeTimers()
})
afterEach(() => vi.useRealTimers())

function socket(handlers: Partial<ReconnectingSocketHandlers> = {}, staleAfterMs = 0) {
  const statuses: StreamStatus[] = []
  const messages: string[] = []
  let urls = 0
  const s = new ReconnectingSocket(
    { connect: (url) => new FakeSocket(url), initialDelayMs: 100, maxDelayMs: 400, staleAfterMs },
    {
      url: () => `ws://api.test/${++urls}`,
      onMessage: (text) => messages.push(text),
      onStatus: (st) => statuses.push(st),
      ...handlers,
    },
  )
  s.start()
  return { s, statuses, messages }
}

describe('ReconnectingSocket', () => {
  it('asks for the URL at each attempt and backs off 100, 200, 400, 400 ms; an open resets the backoff', () => {
    const { s, statuses } = socket()
    expect(last().url).toBe('ws://api.test/1')
    last().drop()
    vi.advanceTimersByTime(100)
    expect(last().url).toBe('ws://api.test/2')
    for (const wait of [200, 400, 400]) {
      last().drop()
      vi.advanceTimersByTime(wait - 1)
      const before = FakeSocket.all.length
      vi.advanceTimersByTime(1)
      expect(FakeSocket.all).toHaveLength(before + 1)
    }
    last().open()
    last().drop()
    vi.advanceTimersByTime(100)
    expect(FakeSocket.all).toHaveLength(6)
    expect(s.reconnects).toBe(5)
    expect(statuses.slice(0, 3)).toEqual(['connecting', 'reconnecting', 'reconnecting'])
    s.close()
    expect(statuses.at(-1)).toBe('closed')
  })

  it('sends only while a connection is open; onOpen runs before the status says open', () => {
    const order: string[] = []
    const { s } = socket({
      onOpen: () => {
        order.push('onOpen')
        s.send('"hello"')
      },
      onStatus: (st) => order.push(st),
    })
    expect(s.send('"early"')).toBe(false)
    last().open()
    expect(order).toEqual(['connecting', 'onOpen', 'open'])
    expect(last().sent).toEqual(['hello'])
    last().drop()
    expect(s.send('"between"')).toBe(false)
    s.close()
  })

  it('a silent connection is closed (4000) and reopened; the dropped one says nothing more', () => {
    const { s, messages } = socket({}, 1_000)
    const first = last()
    const close = vi.spyOn(first, 'close')
    first.open()
    vi.advanceTimersByTime(999)
    first.push({ n: 1 })
    vi.advanceTimersByTime(999)
    expect(FakeSocket.all).toHaveLength(1)
    vi.advanceTimersByTime(1)
    expect(close).toHaveBeenCalledWith(4000, 'no message within staleAfterMs')
    first.push({ n: 2 }) // late, on the dropped socket: not handed over
    vi.advanceTimersByTime(100)
    expect(FakeSocket.all).toHaveLength(2)
    expect(messages).toEqual(['{"n":1}'])
    s.close()
  })

  it('reconnect() closes with its code and opens another after the backoff', () => {
    const { s } = socket()
    const first = last()
    const close = vi.spyOn(first, 'close')
    first.open()
    s.reconnect(4000, 'sequence gap')
    expect(close).toHaveBeenCalledWith(4000, 'sequence gap')
    vi.advanceTimersByTime(100)
    expect(FakeSocket.all).toHaveLength(2)
    s.close()
  })

  it('a final close stops for good; close() too, with 1000', () => {
    const codes: (number | undefined)[] = []
    const a = socket({
      isFinalClose: (code) => {
        codes.push(code)
        return code === 4401
      },
    })
    last().open()
    last().drop(1006)
    vi.advanceTimersByTime(100)
    last().open()
    last().drop(4401, 'invalid token')
    vi.advanceTimersByTime(60_000)
    expect(FakeSocket.all).toHaveLength(2)
    expect(codes).toEqual([1006, 4401])
    expect(a.statuses.at(-1)).toBe('closed')

    FakeSocket.all = []
    const b = socket()
    const close = vi.spyOn(last(), 'close')
    last().open()
    b.s.close()
    expect(close).toHaveBeenCalledWith(1000, 'closed by the client')
    vi.advanceTimersByTime(60_000)
    expect(FakeSocket.all).toHaveLength(1)
  })

  it('a connect that throws is retried after the backoff', () => {
    let calls = 0
    const s = new ReconnectingSocket(
      {
        connect: (url) => {
          if (++calls === 1) throw new Error('refused')
          return new FakeSocket(url)
        },
        initialDelayMs: 50,
        staleAfterMs: 0,
      },
      { url: () => 'ws://api.test/', onMessage: () => {} },
    )
    s.start()
    expect(FakeSocket.all).toHaveLength(0)
    vi.advanceTimersByTime(50)
    expect(FakeSocket.all).toHaveLength(1)
    s.close()
  })
})
