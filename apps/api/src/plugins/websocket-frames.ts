/**
 * WebSocket text frames built once for every socket (websocket-hub.ts explains the fan-out): the
 * framing (`textFrame`, `joinFrames`) and the direct write past `ws.send` (`writeFrame`).
 */
import type { WebSocket } from 'ws'

/**
 * Server-to-client text messages framed once for every socket: `wire` holds whole WebSocket frames
 * (RFC 6455 5.2: FIN + text opcode, unmasked as every server frame is, the payload length, the
 * payload), optionally after an empty ping frame (heartbeats: one write for both).
 */
export interface TextFrame {
  /** the bytes on the wire: [ping frame +] one or more text frames */
  readonly wire: Buffer
  /** the messages in `wire`, in order (UTF-8 JSON; views of `wire`, not copies) */
  readonly messages: readonly Buffer[]
  /** `wire` starts with a ping frame */
  readonly ping: boolean
}

const PING_FRAME = Buffer.from([0x89, 0x00])

/** Frames one message (see TextFrame); `ping` prepends an empty ping frame. */
export function textFrame(text: string | Buffer, opts: { ping?: boolean } = {}): TextFrame {
  const n = typeof text === 'string' ? Buffer.byteLength(text) : text.length
  const head = (opts.ping ? PING_FRAME.length : 0) + (n < 126 ? 2 : n < 65_536 ? 4 : 10)
  const wire = Buffer.allocUnsafe(head + n)
  let at = 0
  if (opts.ping) at += PING_FRAME.copy(wire, 0)
  wire[at++] = 0x81 // FIN, opcode 1 (text), no RSV bit (never compressed)
  if (n < 126) wire[at++] = n
  else if (n < 65_536) {
    wire[at++] = 126
    at = wire.writeUInt16BE(n, at)
  } else {
    wire[at++] = 127
    at = wire.writeBigUInt64BE(BigInt(n), at)
  }
  if (typeof text === 'string') wire.write(text, at, 'utf8')
  else text.copy(wire, at)
  return { wire, messages: [wire.subarray(head)], ping: opts.ping === true }
}

/** Several frames as one write, in order (each keeps its own messages; a ping stays only if first). */
export function joinFrames(frames: readonly TextFrame[]): TextFrame {
  if (frames.length === 1) return frames[0] as TextFrame
  const wire = Buffer.concat(frames.map((f) => f.wire))
  const messages: Buffer[] = []
  let at = 0
  for (const f of frames) {
    if (f.ping && at > 0) throw new Error('a ping frame must come first')
    for (const m of f.messages) {
      const from = at + m.byteOffset - f.wire.byteOffset // the message's place in its frame, moved
      messages.push(wire.subarray(from, from + m.length))
    }
    at += f.wire.length
  }
  return { wire, messages, ping: frames[0]?.ping === true }
}

/** What writeFrame reads of a `ws` WebSocket beyond its public API (ws 8.x: lib/websocket.js, lib/sender.js). */
interface WsInternals {
  _socket?: { write(chunk: Buffer): boolean } | null
  _sender?: { _state?: unknown; _queue?: unknown; _firstFragment?: unknown } | null
}

const SENDER_IDLE = 0 // lib/sender.js DEFAULT: not deflating, not reading a Blob
/** `ws.send` options of a text message */
export const TEXT = { binary: false } as const
const OPEN = 1

/**
 * Writes a prepared frame to a `ws` socket. `ws` has no public way to send bytes already framed
 * (`Sender.frame` is not in its typings, `sendFrame` is private), and `ws.send` frames each call
 * again (a header, an options object, a corked two-part write per socket). So when the socket is
 * open, has no extension (no permessage-deflate), and its Sender is idle with nothing queued and
 * no fragmented message under way, the frame goes straight to the TCP socket: the bytes are the
 * ones `ws` would write, in order with everything `ws` wrote before, and they count in
 * `bufferedAmount` (the socket's writable length) like any send. Otherwise it falls back to
 * `ws.ping()` / `ws.send()` per message. The only use of `ws` internals, pinned by websocket-hub.test.ts:
 * if a `ws` upgrade changes them, that test fails (and this falls back rather than misbehaves).
 * Resolves whether the frame went the direct way.
 */
export function writeFrame(ws: WebSocket, frame: TextFrame): boolean {
  const { _socket: socket, _sender: sender } = ws as unknown as WsInternals
  if (
    ws.readyState === OPEN &&
    socket &&
    sender &&
    sender._state === SENDER_IDLE &&
    Array.isArray(sender._queue) &&
    sender._queue.length === 0 &&
    sender._firstFragment === true &&
    ws.extensions === ''
  ) {
    socket.write(frame.wire)
    return true
  }
  if (frame.ping) ws.ping()
  for (const m of frame.messages) ws.send(m, TEXT)
  return false
}
