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

import { ReconnectingSocket, type ReconnectingSocketOptions, type StreamStatus } from './reconnecting-socket.js'
import type {
  AccountErrorMessage,
  AccountEventMessage,
  AccountResnapshotMessage,
  AccountSnapshotMessage,
} from './types.js'

/** The stream's token and callbacks, and how it connects (`connect`, the backoff, `staleAfterMs`: ReconnectingSocketOptions). */
export interface AccountStreamOptions extends ReconnectingSocketOptions {
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
}

/** Close codes after which reconnecting with the same token cannot help. */
const AUTH_CLOSE_CODES = new Set([4400, 4401])

export class AccountStream {
  readonly #opts: AccountStreamOptions
  #lastSeq: number | undefined
  readonly #socket: ReconnectingSocket
  readonly #stats = { gaps: 0, resnapshots: 0 }

  constructor(opts: AccountStreamOptions) {
    this.#opts = opts
    this.#lastSeq = opts.fromSeq
    this.#socket = new ReconnectingSocket(opts, {
      url: () => `${this.#opts.baseUrl.replace(/\/+$/, '').replace(/^http/, 'ws')}/ws/account`,
      onOpen: () => this.#onOpen(),
      onMessage: (text) => this.#onMessage(text),
      isFinalClose: (code, reason) => {
        if (code === undefined || !AUTH_CLOSE_CODES.has(code)) return false
        this.#opts.onAuthFailed?.(code, String(reason ?? ''))
        return true
      },
      onStatus: (s) => this.#opts.onStatus?.(s),
    })
    this.#socket.start()
  }

  /** The last seq handed over (keep it to resume in a later session); undefined before the snapshot. */
  get lastSeq(): number | undefined {
    return this.#lastSeq
  }
  get stats(): { reconnects: number; gaps: number; resnapshots: number } {
    return { reconnects: this.#socket.reconnects, ...this.#stats }
  }

  /** Closes for good: no reconnect. */
  close(): void {
    this.#socket.close()
  }

  /** The token first (read now: a renewed one is the one used), then the subscription, resumed when it can be. */
  #onOpen() {
    const token = typeof this.#opts.token === 'function' ? this.#opts.token() : this.#opts.token
    this.#socket.send(JSON.stringify({ type: 'auth', token: token ?? '' }))
    this.#socket.send(
      JSON.stringify({ type: 'subscribe', ...(this.#lastSeq !== undefined && { fromSeq: this.#lastSeq }) }),
    )
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
      this.#socket.send(JSON.stringify({ type: 'subscribe' }))
    } else if (msg.type === 'error') this.#opts.onServerError?.(msg as unknown as AccountErrorMessage)
  }

  #onEvent(e: AccountEventMessage) {
    const last = this.#lastSeq
    if (last !== undefined && e.seq <= last) return // a repeat
    if (last !== undefined && e.seq !== last + 1) {
      // something was missed: start again from the last seq handed over (the server replays it)
      this.#stats.gaps++
      this.#socket.reconnect(4000, 'sequence gap')
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
