/**
 * Subscriptions to /ws/prices and /ws/strategies (docs/market-data.md) that survive the network:
 *
 * - **Resubscribe on reconnect.** The stream remembers the assets asked for; after a dropped
 *   connection it reconnects with a bounded exponential backoff and asks for the same assets
 *   again (`?assets=`), which brings a fresh snapshot.
 * - **Sequence gaps.** Every update carries a per-asset `seq` that grows by one. An update whose
 *   seq is not the next one means something was missed (a slow-consumer drop, a Redis hiccup):
 *   the stream reports the gap and resubscribes that asset (unsubscribe + subscribe), and the
 *   server answers with a fresh snapshot. An update at or below the last seq is a repeat: dropped.
 * - **Silence.** With no message for `staleAfterMs` (the server sends a heartbeat every 15 s) the
 *   connection is taken as dead, closed and reopened.
 *
 * Works with the browser's WebSocket and with `ws` in Node (pass `connect`).
 */

import { ReconnectingSocket, type ReconnectingSocketOptions, type StreamStatus } from './reconnecting-socket.js'
import type {
  PriceSnapshotMessage,
  PriceUpdate,
  StrategyEvent,
  StrategySnapshotMessage,
  StrategyState,
  WsClientMessage,
  WsErrorMessage,
} from './types.js'

export type { StreamStatus, WebSocketLike } from './reconnecting-socket.js'

export interface SequenceGap {
  asset: string
  /** the seq that should have come */
  expected: number
  received: number
}

/** The stream's callbacks, and how it connects (`connect`, the backoff, `staleAfterMs`: ReconnectingSocketOptions). */
export interface StreamOptions<Snap, Event> extends ReconnectingSocketOptions {
  /** the API's base URL, http(s) or ws(s): http://127.0.0.1:3000 → ws://127.0.0.1:3000/ws/… */
  baseUrl: string
  /** assets to subscribe at once (default: none; add with subscribe()) */
  assets?: readonly string[]
  /** each asset's state: on connect, on subscribe, after a gap */
  onSnapshot?: (state: Snap) => void
  /** each update, in seq order per asset, none repeated */
  onEvent?: (event: Event) => void
  onGap?: (gap: SequenceGap) => void
  onStatus?: (status: StreamStatus) => void
  /** the server's `error` messages (MALFORMED_MESSAGE, UNKNOWN_ASSET, MESSAGE_TOO_LARGE) */
  onServerError?: (error: WsErrorMessage) => void
}

interface Sequenced {
  asset: string
  seq: number
}

/** How one channel's messages look: where its snapshot items are, which messages are updates. */
interface Channel<Snap extends Sequenced, Event extends Sequenced> {
  path: string
  snapshotItems(msg: Record<string, unknown>): Snap[] | undefined
  isEvent(msg: Record<string, unknown>): msg is Record<string, unknown> & Event
}

export class SequencedStream<Snap extends Sequenced, Event extends Sequenced> {
  readonly #channel: Channel<Snap, Event>
  readonly #opts: StreamOptions<Snap, Event>
  readonly #wanted = new Set<string>()
  readonly #lastSeq = new Map<string, number>()
  /** assets whose resnapshot was asked for after a gap and has not come yet */
  readonly #resyncing = new Set<string>()
  readonly #socket: ReconnectingSocket
  #gaps = 0

  constructor(channel: Channel<Snap, Event>, opts: StreamOptions<Snap, Event>) {
    this.#channel = channel
    this.#opts = opts
    for (const a of opts.assets ?? []) this.#wanted.add(a.toUpperCase())
    this.#socket = new ReconnectingSocket(opts, {
      url: () => {
        // a reconnect starts from the snapshot it gets: what was seen before no longer counts
        this.#lastSeq.clear()
        this.#resyncing.clear()
        return this.#url()
      },
      onMessage: (text) => this.#onMessage(text),
      onStatus: (s) => this.#opts.onStatus?.(s),
    })
    this.#socket.start()
  }

  /** Assets this stream wants (kept across reconnects). */
  get assets(): string[] {
    return [...this.#wanted]
  }
  /** The last seq seen per asset. */
  lastSeq(asset: string): number | undefined {
    return this.#lastSeq.get(asset.toUpperCase())
  }
  /** How many gaps and reconnects happened (for a status line, and tests). */
  get stats(): { gaps: number; reconnects: number } {
    return { gaps: this.#gaps, reconnects: this.#socket.reconnects }
  }

  subscribe(assets: readonly string[]): void {
    const add = assets.map((a) => a.toUpperCase()).filter((a) => !this.#wanted.has(a))
    if (add.length === 0) return
    for (const a of add) this.#wanted.add(a)
    this.#sendOp({ type: 'subscribe', assets: add })
  }

  unsubscribe(assets: readonly string[]): void {
    const drop = assets.map((a) => a.toUpperCase()).filter((a) => this.#wanted.has(a))
    if (drop.length === 0) return
    for (const a of drop) {
      this.#wanted.delete(a)
      this.#lastSeq.delete(a)
      this.#resyncing.delete(a)
    }
    this.#sendOp({ type: 'unsubscribe', assets: drop })
  }

  /** Closes for good: no reconnect. */
  close(): void {
    this.#socket.close()
  }

  #url(): string {
    const base = this.#opts.baseUrl.replace(/\/+$/, '').replace(/^http/, 'ws')
    return `${base}${this.#channel.path}?assets=${encodeURIComponent([...this.#wanted].join(','))}`
  }

  #sendOp(op: WsClientMessage) {
    // not open yet: the connection's own ?assets= (or the next reconnect's) carries the wish
    this.#socket.send(JSON.stringify(op))
  }

  #onMessage(text: string) {
    let msg: Record<string, unknown>
    try {
      msg = JSON.parse(text) as Record<string, unknown>
    } catch {
      return
    }
    if (msg.type === 'error') {
      this.#opts.onServerError?.(msg as unknown as WsErrorMessage)
      return
    }
    if (msg.type === 'subscribed') {
      // a resnapshot that brought no state for an asset (no data yet) still ends its resync
      for (const a of (msg.assets as string[] | undefined) ?? []) this.#resyncing.delete(a)
      return
    }
    const items = msg.type === 'snapshot' ? this.#channel.snapshotItems(msg) : undefined
    if (items) {
      for (const item of items) {
        if (!this.#wanted.has(item.asset)) continue
        // the snapshot is the truth as of its seq: updates after it continue from there
        this.#lastSeq.set(item.asset, item.seq)
        this.#resyncing.delete(item.asset)
        this.#opts.onSnapshot?.(item)
      }
      return
    }
    if (!this.#channel.isEvent(msg)) return
    const { asset, seq } = msg
    if (!this.#wanted.has(asset)) return
    const last = this.#lastSeq.get(asset)
    if (last !== undefined && seq <= last) return // a repeat
    this.#lastSeq.set(asset, seq)
    if (last !== undefined && seq !== last + 1) this.#onGap({ asset, expected: last + 1, received: seq })
    this.#opts.onEvent?.(msg)
  }

  #onGap(gap: SequenceGap) {
    this.#gaps++
    this.#opts.onGap?.(gap)
    if (this.#resyncing.has(gap.asset)) return // one resnapshot in flight is enough
    this.#resyncing.add(gap.asset)
    // the server skips topics already held, so drop it first: the subscribe then loads a snapshot
    this.#sendOp({ type: 'unsubscribe', assets: [gap.asset] })
    this.#sendOp({ type: 'subscribe', assets: [gap.asset] })
  }
}

const PRICES: Channel<PriceUpdate, PriceUpdate> = {
  path: '/ws/prices',
  snapshotItems: (m) => (m.channel === 'prices' ? (m as unknown as PriceSnapshotMessage).updates : undefined),
  isEvent: (m): m is Record<string, unknown> & PriceUpdate =>
    m.type === 'price' && typeof m.asset === 'string' && typeof m.seq === 'number',
}

const STRATEGIES: Channel<StrategyState, StrategyEvent> = {
  path: '/ws/strategies',
  snapshotItems: (m) => (m.channel === 'strategies' ? (m as unknown as StrategySnapshotMessage).states : undefined),
  isEvent: (m): m is Record<string, unknown> & StrategyEvent =>
    m.type === 'strategy' && typeof m.asset === 'string' && typeof m.seq === 'number',
}

/** Live prices (WS /ws/prices): a snapshot per asset, then every update in seq order. */
export function openPriceStream(
  opts: StreamOptions<PriceUpdate, PriceUpdate>,
): SequencedStream<PriceUpdate, PriceUpdate> {
  return new SequencedStream(PRICES, opts)
}

/** The strategy feed (WS /ws/strategies): each asset's state, then its events in seq order. */
export function openStrategyStream(
  opts: StreamOptions<StrategyState, StrategyEvent>,
): SequencedStream<StrategyState, StrategyEvent> {
  return new SequencedStream(STRATEGIES, opts)
}
