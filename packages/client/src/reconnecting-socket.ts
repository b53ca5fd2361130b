/**
 * The connection machinery the client's streams share (ws.ts's SequencedStream, account-stream.ts's
 * AccountStream): one WebSocket at a time, reopened after a drop with a bounded exponential backoff,
 * and taken as dead after `staleAfterMs` without a message. What a connection says and how its
 * messages are read is the stream's (ReconnectingSocketHandlers).
 */

/** The part of a WebSocket (browser or `ws`) a stream uses. */
export interface WebSocketLike {
  send(data: string): void
  close(code?: number, reason?: string): void
  onopen: ((ev: unknown) => void) | null
  onmessage: ((ev: { data: unknown }) => void) | null
  onclose: ((ev: unknown) => void) | null
  onerror: ((ev: unknown) => void) | null
}

export type StreamStatus = 'connecting' | 'open' | 'reconnecting' | 'closed'

/** How a stream connects and when it gives up on a silent connection. */
export interface ReconnectingSocketOptions {
  /** default: the global WebSocket (browsers, Node 22) */
  connect?: (url: string) => WebSocketLike
  /** first reconnect delay (default 250 ms), doubled per failed attempt up to maxDelayMs (default 10 s) */
  initialDelayMs?: number
  maxDelayMs?: number
  /** no message for this long closes and reopens the connection (default 45 s; 0 turns it off) */
  staleAfterMs?: number
}

/** What the stream does with the connection. */
export interface ReconnectingSocketHandlers {
  /** Each connection attempt, after its status: the URL to open (state a new connection resets is reset here). */
  url(): string
  /** The connection opened: what it starts with (`send` works from here), before the status `open`. */
  onOpen?(): void
  /** A text message (any message also proves the connection alive). */
  onMessage(text: string): void
  /**
   * The server closed the connection: true keeps the stream closed for good (no reconnect; the status
   * then becomes `closed`), false reconnects.
   */
  isFinalClose?(code: number | undefined, reason: string | undefined): boolean
  onStatus?(status: StreamStatus): void
}

export const RECONNECT_INITIAL_MS = 250
export const RECONNECT_MAX_MS = 10_000
export const STALE_AFTER_MS = 45_000

function defaultConnect(url: string): WebSocketLike {
  const Ctor = (globalThis as { WebSocket?: new (url: string) => WebSocketLike }).WebSocket
  if (!Ctor) throw new Error('no global WebSocket: pass `connect` (e.g. url => new WebSocket(url) from "ws")')
  return new Ctor(url)
}

export class ReconnectingSocket {
  readonly #opts: ReconnectingSocketOptions
  readonly #handlers: ReconnectingSocketHandlers
  #socket: WebSocketLike | undefined
  #open = false
  #closed = false
  #attempt = 0
  #reconnects = 0
  #reconnectTimer: ReturnType<typeof setTimeout> | undefined
  #staleTimer: ReturnType<typeof setTimeout> | undefined

  constructor(opts: ReconnectingSocketOptions, handlers: ReconnectingSocketHandlers) {
    this.#opts = opts
    this.#handlers = handlers
  }

  /** Reconnects scheduled since start (after drops, failed attempts, silence, `reconnect()`). */
  get reconnects(): number {
    return this.#reconnects
  }

  /** Opens the first connection. */
  start(): void {
    this.#connect()
  }

  /** Sends on the open connection; false (nothing sent) while none is open. */
  send(data: string): boolean {
    if (!this.#open || !this.#socket) return false
    this.#socket.send(data)
    return true
  }

  /** Closes the connection with `code` and opens another after the backoff (e.g. on a sequence gap). */
  reconnect(code: number, reason: string): void {
    this.#drop(code, reason)
    this.#scheduleReconnect()
  }

  /** Closes for good: no reconnect. */
  close(): void {
    this.#closed = true
    clearTimeout(this.#reconnectTimer)
    this.#drop(1000, 'closed by the client')
    this.#status('closed')
  }

  #status(s: StreamStatus) {
    this.#handlers.onStatus?.(s)
  }

  /** Forgets the socket and closes it; it says nothing more (its handlers are removed). */
  #drop(code: number, reason: string) {
    clearTimeout(this.#staleTimer)
    const s = this.#socket
    this.#socket = undefined
    this.#open = false
    if (!s) return
    s.onclose = null
    s.onmessage = null
    s.onerror = null
    s.close(code, reason)
  }

  #connect() {
    if (this.#closed) return
    this.#status(this.#reconnects === 0 ? 'connecting' : 'reconnecting')
    let socket: WebSocketLike
    try {
      socket = (this.#opts.connect ?? defaultConnect)(this.#handlers.url())
    } catch {
      this.#scheduleReconnect()
      return
    }
    this.#socket = socket
    socket.onopen = () => {
      this.#open = true
      this.#attempt = 0
      this.#touch()
      this.#handlers.onOpen?.()
      this.#status('open')
    }
    socket.onmessage = (ev) => {
      this.#touch()
      if (typeof ev.data === 'string') this.#handlers.onMessage(ev.data)
    }
    socket.onerror = () => {}
    socket.onclose = (ev) => this.#onClose(socket, ev)
  }

  #onClose(socket: WebSocketLike, ev: unknown) {
    if (this.#socket !== socket) return
    this.#socket = undefined
    this.#open = false
    clearTimeout(this.#staleTimer)
    const { code, reason } = (ev ?? {}) as { code?: number; reason?: string }
    if (this.#handlers.isFinalClose?.(code, reason)) {
      this.#closed = true
      this.#status('closed')
      return
    }
    this.#scheduleReconnect()
  }

  #scheduleReconnect() {
    if (this.#closed) return
    const initial = this.#opts.initialDelayMs ?? RECONNECT_INITIAL_MS
    const max = this.#opts.maxDelayMs ?? RECONNECT_MAX_MS
    const delay = Math.min(max, initial * 2 ** Math.min(this.#attempt, 16))
    this.#attempt++
    this.#reconnects++
    this.#status('reconnecting')
    this.#reconnectTimer = setTimeout(() => this.#connect(), delay)
  }

  /** Any message proves the connection alive; silence past staleAfterMs drops it. */
  #touch() {
    const after = this.#opts.staleAfterMs ?? STALE_AFTER_MS
    if (after <= 0) return
    clearTimeout(this.#staleTimer)
    this.#staleTimer = setTimeout(() => {
      if (this.#socket) this.reconnect(4000, 'no message within staleAfterMs')
    }, after)
  }
}
