/**
 * The account streams of one API process (docs/account-stream.md "Fan-out"): one LISTEN on
 * `account_events` (one connection, postgres.js `sql.listen`), a registry of the connected
 * sockets per user, and per user one serial queue of work. A notification for a user with
 * sockets here wakes one read of that user's events after the smallest `seq` its sockets have,
 * whatever the number of sockets; each event is serialised once and sent to each socket that
 * has not seen it. Notifications for users not connected here cost a map lookup.
 *
 * Ordering: a socket's snapshot or replay runs in the same queue as the reads, and a read
 * follows each join, so a socket gets every event after its starting `seq`, in order, once.
 * When the LISTEN connection comes back after a drop (notifications may have been lost), every
 * connected user is read again.
 */
import { AMOUNT_UNIT } from '@wh/api-schemas/account-ws'
import type { Sql } from '@wh/db'
import { type AccountEvent, accountEventsAfter } from '@wh/trading'

/** One subscribed socket, as the streams see it. */
export interface AccountSink {
  readonly userId: string
  /** the last event sent (or included in the snapshot / replay) */
  lastSeq: number
  /** sends a text frame; false when the socket is gone (closed, or dropped as a slow reader) */
  send(text: string): boolean
}

/** Events read per query; a full page is followed by the next at once. */
export const READ_PAGE = 500
export const ACCOUNT_EVENTS_CHANNEL = 'account_events'
/** How soon a LISTEN that could not start is tried again. */
export const LISTEN_RETRY_MS = 2_000

interface UserFeed {
  readonly sinks: Set<AccountSink>
  /** the serial queue of this user's work */
  chain: Promise<void>
  /** a read is queued and has not started: later wake-ups ride on it */
  readQueued: boolean
}

export interface StreamsLog {
  warn(obj: object, msg?: string): void
}

export const eventFrame = (e: AccountEvent) =>
  `{"type":"event","seq":${e.seq},"kind":${JSON.stringify(e.kind)},"at":"${e.at}","unit":"${AMOUNT_UNIT}","data":${JSON.stringify(e.data)}}`

export class AccountStreams {
  readonly #sql: Sql
  readonly #log: StreamsLog
  readonly #feeds = new Map<string, UserFeed>()
  #listen: { unlisten(): Promise<void> } | undefined
  #retry: NodeJS.Timeout | undefined
  #closed = false
  /** notifications received, reads made, events sent (frames written), since start */
  readonly stats = { notifications: 0, reads: 0, sent: 0 }

  constructor(sql: Sql, log: StreamsLog) {
    this.#sql = sql
    this.#log = log
  }

  /**
   * LISTENs once for the process, in the background: the API starts (and answers /health as down)
   * while Postgres is away, and the LISTEN is tried again every LISTEN_RETRY_MS until it holds.
   * postgres.js re-LISTENs by itself after a dropped connection. Each time the LISTEN (re)starts,
   * every connected user is read again: what was notified meanwhile was not heard.
   */
  start(): void {
    if (this.#closed || this.#listen) return
    this.#sql
      .listen(
        ACCOUNT_EVENTS_CHANNEL,
        (userId) => {
          this.stats.notifications++
          this.wake(userId)
        },
        () => {
          for (const userId of this.#feeds.keys()) this.wake(userId)
        },
      )
      .then((listen) => {
        this.#listen = listen
        if (this.#closed) listen.unlisten().catch(() => {})
      })
      .catch((err) => {
        this.#log.warn({ err: String(err) }, 'account stream: LISTEN failed, retrying')
        if (this.#closed) return
        this.#retry = setTimeout(() => this.start(), LISTEN_RETRY_MS)
        this.#retry.unref()
      })
  }

  async close(): Promise<void> {
    this.#closed = true
    clearTimeout(this.#retry)
    await this.#listen?.unlisten().catch(() => {})
    this.#feeds.clear()
  }

  get userCount(): number {
    return this.#feeds.size
  }

  /**
   * Runs `start` in the user's queue (it sends the snapshot or the replay and sets the sink's
   * `lastSeq`), then adds the sink to the live stream and reads once more.
   */
  subscribe(sink: AccountSink, start: () => Promise<boolean>): Promise<void> {
    const feed = this.#feed(sink.userId)
    const run = feed.chain.then(async () => {
      if (await start()) feed.sinks.add(sink)
    })
    feed.chain = run.catch(() => {})
    this.wake(sink.userId)
    return run
  }

  leave(sink: AccountSink): void {
    const feed = this.#feeds.get(sink.userId)
    if (!feed) return
    feed.sinks.delete(sink)
    // the feed stays while work is queued; the last task removes an empty one
    if (feed.sinks.size === 0 && !feed.readQueued) this.#dropIfIdle(sink.userId, feed)
  }

  /** Queues one read of the user's new events (coalesced with a read not started yet). */
  wake(userId: string): void {
    const feed = this.#feeds.get(userId)
    if (!feed || feed.readQueued) return
    feed.readQueued = true
    feed.chain = feed.chain.then(async () => {
      feed.readQueued = false
      try {
        await this.#read(userId, feed)
      } catch (err) {
        this.#log.warn({ err: String(err) }, 'account stream read failed')
      }
      if (feed.sinks.size === 0) this.#dropIfIdle(userId, feed)
    })
  }

  #feed(userId: string): UserFeed {
    let feed = this.#feeds.get(userId)
    if (!feed) {
      feed = { sinks: new Set(), chain: Promise.resolve(), readQueued: false }
      this.#feeds.set(userId, feed)
    }
    return feed
  }

  #dropIfIdle(userId: string, feed: UserFeed): void {
    const settled = feed.chain
    settled.then(() => {
      if (feed.chain === settled && feed.sinks.size === 0 && !feed.readQueued && this.#feeds.get(userId) === feed)
        this.#feeds.delete(userId)
    })
  }

  async #read(userId: string, feed: UserFeed): Promise<void> {
    for (;;) {
      if (feed.sinks.size === 0) return
      let from = Number.MAX_SAFE_INTEGER
      for (const s of feed.sinks) from = Math.min(from, s.lastSeq)
      this.stats.reads++
      const events = await accountEventsAfter(this.#sql, userId, from, READ_PAGE)
      for (const e of events) {
        const frame = eventFrame(e)
        for (const s of feed.sinks) {
          if (s.lastSeq >= e.seq) continue
          if (!s.send(frame)) {
            feed.sinks.delete(s)
            continue
          }
          s.lastSeq = e.seq
          this.stats.sent++
        }
      }
      if (events.length < READ_PAGE) return
    }
  }
}
