/**
 * The hub's one-frame-for-every-socket path: `textFrame` builds the bytes `ws` would send, and
 * `writeFrame` writes them past `ws.send` using `ws` internals (websocket-hub.ts). These tests pin
 * those internals: if a `ws` upgrade renames or changes them, they fail here. Then the chunked
 * fan-out keeps each topic's order across chunks.
 */
import { EventEmitter } from 'node:events'
import type { AddressInfo } from 'node:net'
import { Socket } from 'node:net'
import type { Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import * as wsModule from 'ws'
import WebSocket, { WebSocketServer } from 'ws'
import { FanoutHub, type HubStream, joinFrames, textFrame, writeFrame } from './websocket-hub'

/** ws's own framing (public static in lib/sender.js, absent from the typings) */
const wsFrame = (data: Buffer): Buffer =>
  Buffer.concat(
    (wsModule as unknown as { Sender: { frame(d: Buffer, o: object): Buffer[] } }).Sender.frame(data, {
      fin: true,
      opcode: 1,
      mask: false,
      readOnly: true,
      rsv1: false,
    }),
  )

const servers: WebSocketServer[] = []
const sockets: WebSocket[] = []
afterEach(async () => {
  for (const s of sockets.splice(0)) s.terminate()
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))))
})

/** A server socket and the client connected to it, over loopback. */
async function pair(perMessageDeflate = false): Promise<{ server: WebSocket; client: WebSocket; got: string[] }> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate })
  servers.push(wss)
  await new Promise((r) => wss.once('listening', r))
  const connected = new Promise<WebSocket>((r) => wss.once('connection', r))
  const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`, { perMessageDeflate })
  const got: string[] = []
  client.on('message', (d, isBinary) => got.push(isBinary ? '<binary>' : String(d)))
  await new Promise((r) => client.once('open', r))
  const server = await connected
  sockets.push(client, server)
  return { server, client, got }
}

const until = async (ok: () => boolean, what: string) => {
  for (let i = 0; i < 500 && !ok(); i++) await new Promise((r) => setTimeout(r, 10))
  if (!ok()) throw new Error(`timed out waiting for ${what}`)
}

describe('textFrame', () => {
  it('is the frame ws itself would send, for every length class, with the payload as a view', () => {
    for (const n of [0, 1, 125, 126, 65_535, 65_536, 70_000]) {
      const text = 'é'.repeat(Math.floor(n / 2)) + 'x'.repeat(n % 2) // two bytes per é
      const f = textFrame(text)
      expect(f.wire.equals(wsFrame(Buffer.from(text)))).toBe(true)
      expect(f.messages.map(String)).toEqual([text])
      expect(f.messages[0]?.buffer).toBe(f.wire.buffer) // no second copy of the message
      expect(f.ping).toBe(false)
    }
    const j = joinFrames([textFrame('{"a":1}', { ping: true }), textFrame('é'.repeat(100)), textFrame('{}')])
    expect(
      j.wire.equals(
        Buffer.concat([
          Buffer.from([0x89, 0]),
          wsFrame(Buffer.from('{"a":1}')),
          wsFrame(Buffer.from('é'.repeat(100))),
          wsFrame(Buffer.from('{}')),
        ]),
      ),
    ).toBe(true)
    expect(j.messages.map(String)).toEqual(['{"a":1}', 'é'.repeat(100), '{}'])
    expect(j.ping).toBe(true)
    expect(() => joinFrames([textFrame('{}'), textFrame('{}', { ping: true })])).toThrow()
    const p = textFrame('{"type":"heartbeat"}', { ping: true })
    expect(p.wire.subarray(0, 2)).toEqual(Buffer.from([0x89, 0x00]))
    expect(p.wire.subarray(2).equals(wsFrame(Buffer.from('{"type":"heartbeat"}')))).toBe(true)
  })
})

describe('writeFrame (ws internals)', () => {
  it('finds the internals it relies on in the installed ws', async () => {
    const { server } = await pair()
    const internals = server as unknown as { _socket: unknown; _sender: Record<string, unknown> }
    expect(internals._socket).toBeInstanceOf(Socket)
    expect(internals._sender._state).toBe(0)
    expect(internals._sender._queue).toEqual([])
    expect(internals._sender._firstFragment).toBe(true)
    expect(server.extensions).toBe('')
  })

  it('writes the frame directly, in order with ws.send, ping included; the peer reads it as text', async () => {
    const { server, client, got } = await pair()
    let pings = 0
    client.on('ping', () => pings++)
    let pongs = 0
    server.on('pong', () => pongs++)
    expect(writeFrame(server, textFrame('{"a":1}'))).toBe(true)
    server.send('{"b":"é"}')
    expect(writeFrame(server, textFrame('{"c":3}', { ping: true }))).toBe(true)
    expect(writeFrame(server, textFrame('x'.repeat(70_000)))).toBe(true)
    expect(writeFrame(server, joinFrames([textFrame('{"d":4}'), textFrame('{"e":5}')]))).toBe(true)
    await until(() => got.length === 6 && pongs === 1, 'six messages and a pong')
    expect(got.slice(0, 3)).toEqual(['{"a":1}', '{"b":"é"}', '{"c":3}'])
    expect(got[3]).toHaveLength(70_000)
    expect(got.slice(4)).toEqual(['{"d":4}', '{"e":5}'])
    expect(pings).toBe(1)
  })

  it('counts in bufferedAmount (the slow-client drop relies on it)', async () => {
    const { server, client, got } = await pair()
    ;(client as unknown as { _socket: Socket })._socket.pause()
    const big = textFrame('y'.repeat(1 << 20))
    for (let i = 0; i < 32; i++) writeFrame(server, big)
    // 32 MiB cannot all sit in the loopback's kernel buffers
    expect(server.bufferedAmount).toBeGreaterThan(1 << 20)
    ;(client as unknown as { _socket: Socket })._socket.resume()
    await until(() => got.length === 32, '32 messages')
    expect(server.bufferedAmount).toBe(0)
  })

  it('falls back to ping() and send() when an extension (permessage-deflate) is negotiated', async () => {
    const { server, client, got } = await pair(true)
    let pings = 0
    client.on('ping', () => pings++)
    expect(server.extensions).toContain('permessage-deflate')
    expect(writeFrame(server, textFrame('{"z":26}', { ping: true }))).toBe(false)
    expect(writeFrame(server, joinFrames([textFrame('{"y":25}'), textFrame('{"x":24}')]))).toBe(false)
    await until(() => got.length === 3 && pings === 1, 'the messages and the ping')
    expect(got).toEqual(['{"z":26}', '{"y":25}', '{"x":24}'])
  })

  it('falls back once the socket is closing', async () => {
    const { server } = await pair()
    server.close()
    expect(writeFrame(server, textFrame('{}'))).toBe(false)
  })
})

describe('FanoutHub: batched, chunked fan-out', () => {
  /** stands in for ioredis in subscriber mode */
  class FakeSubscriber extends EventEmitter {
    subscribe = async () => 1
    unsubscribe = async () => 0
    disconnect() {}
  }
  /** the text messages in some unmasked server frames */
  const decode = (wire: Buffer): string[] => {
    const out: string[] = []
    for (let at = 0; at < wire.length; ) {
      let len = (wire[at + 1] as number) & 0x7f
      let head = 2
      if (len === 126) {
        len = wire.readUInt16BE(at + 2)
        head = 4
      }
      if (((wire[at] as number) & 0x0f) === 1) out.push(wire.subarray(at + head, at + head + len).toString())
      at += head + len
    }
    return out
  }
  /** a ws socket as writeFrame sees it (idle Sender, no extension): records each write and ws.send */
  const fakeSocket = () => {
    const writes: string[][] = []
    const socket = Object.assign(new EventEmitter(), {
      readyState: 1,
      extensions: '',
      bufferedAmount: 0,
      _sender: { _state: 0, _queue: [], _firstFragment: true },
      _socket: { write: (b: Buffer) => writes.push(decode(b)) },
      writes,
      got: () => writes.flat(),
      send: (d: Buffer | string) => writes.push([String(d)]),
      ping() {},
      terminate() {},
    })
    return socket
  }
  const stream: HubStream = {
    name: 'prices',
    channelOf: (t) => `ch:${t}`,
    seqOf: (raw) => JSON.parse(raw).seq,
  }
  const msg = (asset: string, seq: number) => JSON.stringify({ seq, asset })
  const tick = () => new Promise((r) => setImmediate(r))

  async function setup(chunkSize: number) {
    const sub = new FakeSubscriber()
    const hub = new FanoutHub(sub as unknown as Redis, { maxBufferedBytes: 1 << 20, log: { warn() {} }, chunkSize })
    const open = async (topics: string[], snapshot: (string | null)[] = topics.map(() => null)) => {
      const s = fakeSocket()
      const c = hub.connect(s as unknown as WebSocket)
      await c.subscribe(
        stream,
        topics,
        async () => snapshot,
        (raws) => `snap[${raws.join()}]`,
      )
      return s
    }
    return { sub, hub, open }
  }

  it('delivers each topic in order to every member across chunks; a joiner gets only what is newer', async () => {
    const { sub, hub, open } = await setup(3)
    const sockets = await Promise.all(Array.from({ length: 10 }, () => open(['ETH'])))
    for (let seq = 1; seq <= 5; seq++) sub.emit('message', 'ch:ETH', msg('ETH', seq))
    expect(sockets.every((s) => s.writes.length === 1)).toBe(true) // the snapshot only: writing waits a turn
    await tick()
    expect(sockets.filter((s) => s.writes.length === 2)).toHaveLength(3) // one chunk of 3 clients
    const late = await open(['ETH'], [msg('ETH', 3)])
    sub.emit('message', 'ch:ETH', msg('ETH', 6))
    await until(() => sockets.every((s) => s.got().length === 7) && late.got().length === 4, 'every message')
    const all = [1, 2, 3, 4, 5, 6].map((seq) => msg('ETH', seq))
    for (const s of sockets) expect(s.got()).toEqual(['snap[]', ...all])
    // the snapshot, then 1-5 in one write; 6 came mid-batch: with them for the clients not written yet
    expect(sockets.map((s) => s.writes.length)).toEqual([3, 3, 3, 2, 2, 2, 2, 2, 2, 2])
    expect(late.got()).toEqual([`snap[${msg('ETH', 3)}]`, msg('ETH', 4), msg('ETH', 5), msg('ETH', 6)])
    await hub.close()
  })

  it('messages that arrive together reach each client in one write, only those of its topics', async () => {
    const { sub, hub, open } = await setup(500)
    const both = await open(['ETH', 'BTC'])
    const eth = await open(['ETH'])
    const btc = await open(['BTC'])
    sub.emit('message', 'ch:BTC', msg('BTC', 7))
    sub.emit('message', 'ch:ETH', msg('ETH', 9))
    sub.emit('message', 'ch:BTC', msg('BTC', 8))
    await tick()
    expect(both.writes.at(-1)).toEqual([msg('BTC', 7), msg('ETH', 9), msg('BTC', 8)])
    expect(eth.writes.at(-1)).toEqual([msg('ETH', 9)])
    expect(btc.writes.at(-1)).toEqual([msg('BTC', 7), msg('BTC', 8)])
    for (const s of [both, eth, btc]) expect(s.writes).toHaveLength(2) // snapshot, then one write
    // a repeated or older number is not sent again
    sub.emit('message', 'ch:BTC', msg('BTC', 8))
    sub.emit('message', 'ch:ETH', msg('ETH', 10))
    await tick()
    expect(both.writes.at(-1)).toEqual([msg('ETH', 10)])
    expect(btc.writes).toHaveLength(2)
    await hub.close()
  })

  it('a message arriving mid-batch rides along for the clients not written yet, then reaches the others', async () => {
    const { sub, hub, open } = await setup(2)
    const sockets = await Promise.all(Array.from({ length: 6 }, () => open(['ETH', 'BTC'])))
    sub.emit('message', 'ch:ETH', msg('ETH', 1))
    await tick() // clients 0 and 1 written
    sub.emit('message', 'ch:BTC', msg('BTC', 1))
    sub.emit('message', 'ch:ETH', msg('ETH', 2))
    await until(() => sockets.every((s) => s.got().length === 4), 'three messages everywhere')
    for (const s of sockets) expect(s.got().slice(1)).toEqual([msg('ETH', 1), msg('BTC', 1), msg('ETH', 2)])
    for (const s of sockets.slice(0, 2))
      expect(s.writes.slice(1)).toEqual([[msg('ETH', 1)], [msg('BTC', 1), msg('ETH', 2)]])
    for (const s of sockets.slice(2)) expect(s.writes.slice(1)).toEqual([[msg('ETH', 1), msg('BTC', 1), msg('ETH', 2)]])
    await hub.close()
  })

  it('a client closing or leaving mid-batch gets nothing more, the others everything', async () => {
    const { sub, hub, open } = await setup(2)
    const sockets = await Promise.all(Array.from({ length: 6 }, () => open(['ETH'])))
    const clients = [...hub.clients()]
    sub.emit('message', 'ch:ETH', msg('ETH', 1))
    await tick() // clients 0 and 1 written
    clients[4]?.close()
    clients[5]?.unsubscribe(stream, ['ETH'])
    await until(() => sockets.slice(0, 4).every((s) => s.got().length === 2), 'the rest')
    expect(sockets[4]?.got()).toEqual(['snap[]'])
    expect(sockets[5]?.got()).toEqual(['snap[]'])
    await hub.close()
  })
})
