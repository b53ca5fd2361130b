/**
 * The signed-in user's own events over WS /ws/account (docs/account-stream.md), without gaps
 * across reconnects:
 *
 * - **Token.** Sent as the first message (`{type:'auth'}`), never in the URL. `token` may be a
 *   function: it is read at each connect, so a token renewed meanwhile is the one used.
 * - **Resume.** The stream keeps the last `seq` it handed over; after a dropped connection it
 *   reconnects with a bounded exponential backoff and subscribes `fromSeq` that seq: the server
 *   replays exactly the missed events. When it cannot (too many, too old), it says `resnapshot`
 *   and the stream takes a fresh snapshot (`onSnapshot` again).
 * - **Gaps.** An event whose seq is not the next one (it should not happen) reconnects from the
 *   last seq seen; a repeat is dropped.
 * - **Silence.** No message for `staleAfterMs` (heartbeats come every 15 s) reopens the connection.
 * - **Refused token** (close 4400 or 4401): no reconnect; `onAuthFailed` says so.
 */
import type {
  AccountErrorMessage,
  AccountEventMessage,
  AccountResnapshotMessage,
  AccountSnapshotMessage,
} from './types.js'
import type { StreamStatus, WebSocketLike } from './ws.js'

export interface AccountStreamOptions {
  /** the API's base URL, http(s) or ws(s) */
  baseUrl: string
  /** the bearer token, or a function giving the current one at each connect */
  token: string | (() => string | undefined)
  /** resume after this seq (one kept from an earlier session); default: start from a snapshot */
  fromSeq?: number
  onSnapshot?: (snapshot: AccountSnapshotMessage) => void
  /** each event, in seq order, none repeated, none missing */
  onEvent?: (event: AccountEventMessage) => void
  /** the server could not replay from the last seq: a snapshot follows */
  onResnapshot?: (message: AccountResnapshotMessage) => void
  onStatus?: (status: StreamStatus) => void
  onServerError?: (error: AccountErrorMessage) => void
  /** the server refused the token (4400, 4401): the stream is closed */
  onAuthFailed?: (code: number, reason: string) => void
  /** default: the global WebSocket (browsers, Node 22) */
  connect?: (url: string) => WebSocketLike
  /** first reconnect delay (default 250 ms), doubled per failed attempt up to maxDelayMs (default 10 s) */
  initialDelayMs?: number
  maxDelayMs?: number
  /** no message for this long closes and reopens the connection (default 45 s; 0 turns it off) */
  staleAfterMs?: number
}

/** Close codes after which reconnecting with the same token cannot help. */
const AUTH_CLOSE_CODES = new Set([4400, 4401])

function defaultConnect(url: string): WebSocketLike {
  const Ctor = (globalThis as { WebSocket?: new (url: string) => WebSocketLike }).WebSocket
  if (!Ctor) throw new Error('no global WebSocket: pass `connect` (e.g. url => new WebSocket(url) from "ws")')
  return new Ctor(url)
}

export class AccountStream {
  readonly #opts: AccountStreamOptions
  #lastSeq: number | undefined
  #socket: WebSocketLike | undefined
  #closed = false
  #attempt = 0
  #reconnectTimer: ReturnType<typeof setTimeout> | undefined
  #staleTimer: ReturnType<typeof setTimeout> | undefined
  readonly #stats = { reconnects: 0, gaps: 0, resnapshots: 0 }

  constructor(opts: AccountStreamOptions) {
    this.#opts = opts
    this.#lastSeq = opts.fromSeq
    this.#connect()
  }

  /** The last seq handed over (keep it to resume in a later session); undefined before the snapshot. */
  get lastSeq(): number | undefined {
    return this.#lastSeq
  }
  get stats(): { reconnects: number; gaps: number; resnapshots: number } {
    return { ...this.#stats }
  }

  /** Closes for good: no reconnect. */
  close(): void {
    this.#closed = true
    clearTimeout(this.#reconnectTimer)
    this.#drop(1000, 'closed by the client')
    this.#opts.onStatus?.('closed')
  }

  #drop(code: number, reason: string) {
    clearTimeout(this.#staleTimer)
    const s = this.#socket
    this.#socket = undefined
    if (!s) return
    s.onclose = null
    s.onmessage = null
    s.onerror = null
    s.close(code, reason)
  }

  #connect() {
    if (this.#closed) return
    this.#opts.onStatus?.(this.#stats.reconnects === 0 ? 'connecting' : 'reconnecting')
    const base = this.#opts.baseUrl.replace(/\/+$/, '').replace(/^http/, 'ws')
    let socket: WebSocketLike
    try {
      socket = (this.#opts.connect ?? defaultConnect)(`${base}/ws/account`)
    } catch {
      this.#scheduleReconnect()
      return
    }
    this.#socket = socket
    socket.onopen = () => {
      this.#attempt = 0
      this.#touch()
      const token = typeof this.#opts.token === 'function' ? this.#opts.token() : this.#opts.token
      socket.send(JSON.stringify({ type: 'auth', token: token ?? '' }))
      socket.send(JSON.stringify({ type: 'subscribe', ...(this.#lastSeq !== undefined && { fromSeq: this.#lastSeq }) }))
      this.#opts.onStatus?.('open')
    }
    socket.onmessage = (ev) => {
      this.#touch()
      if (typeof ev.data === 'string') this.#onMessage(ev.data)
    }
    socket.onerror = () => {}
    socket.onclose = (ev) => {
      if (this.#socket !== socket) return
      this.#socket = undefined
      clearTimeout(this.#staleTimer)
      const { code, reason } = (ev ?? {}) as { code?: number; reason?: string }
      if (code !== undefined && AUTH_CLOSE_CODES.has(code)) {
        this.#closed = true
        this.#opts.onAuthFailed?.(code, String(reason ?? ''))
        this.#opts.onStatus?.('closed')
        return
      }
      this.#scheduleReconnect()
    }
  }

  #scheduleReconnect() {
    if (this.#closed) return
    const initial = this.#opts.initialDelayMs ?? 250
    const max = this.#opts.maxDelayMs ?? 10_000
    const delay = Math.min(max, initial * 2 ** Math.min(this.#attempt, 16))
    this.#attempt++
    this.#stats.reconnects++
    this.#opts.onStatus?.('reconnecting')
    this.#reconnectTimer = setTimeout(() => this.#connect(), delay)
  }

  #touch() {
    const after = this.#opts.staleAfterMs ?? 45_000
    if (after <= 0) return
    clearTimeout(this.#staleTimer)
    this.#staleTimer = setTimeout(() => {
      this.#drop(4000, 'no message within staleAfterMs')
      this.#scheduleReconnect()
    }, after)
  }

  #onMessage(text: string) {
    let msg: Record<string, unknown>
    try {
      msg = JSON.parse(text) as Record<string, unknown>
    } catch {
      return
    }
    if (msg.type === 'snapshot') {
      const snap = msg as unknown as AccountSnapshotMessage
      this.#lastSeq = snap.seq
      this.#opts.onSnapshot?.(snap)
    } else if (msg.type === 'event') this.#onEvent(msg as unknown as AccountEventMessage)
    else if (msg.type === 'resnapshot') {
      this.#stats.resnapshots++
      this.#lastSeq = undefined
      this.#opts.onResnapshot?.(msg as unknown as AccountResnapshotMessage)
      this.#socket?.send(JSON.stringify({ type: 'subscribe' }))
    } else if (msg.type === 'error') this.#opts.onServerError?.(msg as unknown as AccountErrorMessage)
  }

  #onEvent(e: AccountEventMessage) {
    const last = this.#lastSeq
    if (last !== undefined && e.seq <= last) return // a repeat
    if (last !== undefined && e.seq !== last + 1) {
      // something was missed: start again from the last seq handed over (the server replays it)
      this.#stats.gaps++
      this.#drop(4000, 'sequence gap')
      this.#scheduleReconnect()
      return
    }
    this.#lastSeq = e.seq
    this.#opts.onEvent?.(e)
  }
}

/** The user's own events (WS /ws/account): a snapshot, then every event in seq order, resumed across reconnects. */
export function openAccountStream(opts: AccountStreamOptions): AccountStream {
  return new AccountStream(opts)
}
