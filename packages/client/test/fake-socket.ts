/** The client's WebSocket tests' socket (src/ws.test.ts, src/account-stream.test.ts). */
import type { WebSocketLike } from '../src/ws.js'

/** An in-memory socket: the test plays the server. */
export class FakeSocket implements WebSocketLike {
  static all: FakeSocket[] = []
  readonly sent: Record<string, unknown>[] = []
  closed = false
  onopen: ((ev: unknown) => void) | null = null
  onmessage: ((ev: { data: unknown }) => void) | null = null
  onclose: ((ev: unknown) => void) | null = null
  onerror: ((ev: unknown) => void) | null = null
  constructor(readonly url: string) {
    FakeSocket.all.push(this)
  }
  send(data: string) {
    this.sent.push(JSON.parse(data))
  }
  close() {
    this.closed = true
  }
  open() {
    this.onopen?.({})
  }
  push(msg: object) {
    this.onmessage?.({ data: JSON.stringify(msg) })
  }
  drop(code = 1006, reason = '') {
    this.onclose?.({ code, reason })
  }
}
