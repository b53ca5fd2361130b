/**
 * The fan-out's units of work (websocket-hub.ts explains the whole): a `Batch` writes the messages
 * that arrived together to the clients of their topics, an `EachClient` runs a heartbeat over every
 * client. The hub runs them a chunk of client writes at a time.
 */
import type { TextFrame } from './websocket-frames'
import { joinFrames } from './websocket-frames'
import type { HubStream } from './websocket-stream'

/**
 * What a batch writes to: the hub's `HubClient`, named by its shape so the batches need not import
 * the hub that runs them.
 */
export interface FanoutClient {
  /** the id of the last batch that handled this client */
  batchMark: number
  /** true when this message of topic `key` is to be written to the client now (`HubClient.accept`) */
  accept(key: string, seq: number, frame: TextFrame): boolean
  send(frame: TextFrame): unknown
}

/** A batch closes at this many bytes of messages (a larger message is a batch of its own). */
export const MAX_BATCH_BYTES = 64 * 1024

/** The local members of one Redis channel (a stream's topic). */
export interface Route {
  readonly stream: HubStream
  readonly topic: string
  readonly members: Set<FanoutClient>
}

/** One message of a topic, as received. */
export interface Delivery {
  readonly route: Route
  readonly key: string
  readonly seq: number
  readonly frame: TextFrame
}

/** Work the hub does a chunk at a time: `run` makes at most `budget` client writes and says how many. */
export interface Job {
  done: boolean
  run(budget: number): number
}

/**
 * Messages that arrived together, written member by member. Delivery k's members are visited in
 * turn (a live iterator: members that leave meanwhile are skipped, members that join are visited).
 * A client is handled once per batch (its `batchMark`), at the first delivery it is a member of,
 * and gets that and every later delivery of the batch whose route holds it, in one write. A client
 * that joins an earlier delivery's route after that delivery's turn skips it: it joined after the
 * message arrived, so its snapshot (read after joining) is at least as new.
 *
 * A message that arrives while the batch is being written joins it (`append`): the clients not
 * visited yet get it in the same write as the rest. The batch then hands it back (`late`) to go
 * out again in the next one, for the clients visited before it came; the others already have its
 * sequence number and skip it without a write.
 */
export class Batch implements Job {
  done = false
  readonly #id: number
  readonly #deliveries: Delivery[]
  #bytes: number
  /** deliveries appended after the batch started, oldest first */
  readonly late: Delivery[] = []
  #k = 0
  #members: Iterator<FanoutClient> | undefined
  /** per k: the frames of deliveries k.. joined (the usual write: a client of every later route) */
  readonly #joined: (TextFrame | undefined)[] = []

  constructor(id: number, deliveries: Delivery[]) {
    this.#id = id
    this.#deliveries = deliveries
    this.#bytes = deliveries.reduce((n, d) => n + d.frame.wire.length, 0)
  }

  /** Adds a message that arrived meanwhile; false when the batch is full. */
  append(d: Delivery): boolean {
    if (this.done || this.#bytes + d.frame.wire.length > MAX_BATCH_BYTES) return false
    this.#bytes += d.frame.wire.length
    this.#deliveries.push(d)
    this.late.push(d)
    this.#joined.length = 0
    return true
  }

  run(budget: number): number {
    let used = 0
    while (this.#k < this.#deliveries.length) {
      if (!this.#members) this.#members = (this.#deliveries[this.#k] as Delivery).route.members.values()
      const members = this.#members
      for (let next = members.next(); !next.done; next = members.next()) {
        const client = next.value
        if (client.batchMark === this.#id) continue
        client.batchMark = this.#id
        this.#write(client)
        if (++used === budget) return used
      }
      this.#members = undefined
      this.#k++
    }
    this.done = true
    return used
  }

  #write(client: FanoutClient): void {
    const ds = this.#deliveries
    const k = this.#k
    if (k === ds.length - 1) {
      const d = ds[k] as Delivery
      if (client.accept(d.key, d.seq, d.frame)) client.send(d.frame)
      return
    }
    const accepted: TextFrame[] = []
    for (let j = k; j < ds.length; j++) {
      const d = ds[j] as Delivery
      if ((j === k || d.route.members.has(client)) && client.accept(d.key, d.seq, d.frame)) accepted.push(d.frame)
    }
    if (accepted.length === 0) return
    if (accepted.length === 1) client.send(accepted[0] as TextFrame)
    else if (accepted.length < ds.length - k) client.send(joinFrames(accepted))
    else {
      const joined = this.#joined[k] ?? joinFrames(accepted)
      this.#joined[k] = joined
      client.send(joined)
    }
  }
}

/** `run` for every client connected when it starts or joining before it ends (heartbeats). */
export class EachClient<C> implements Job {
  done = false
  readonly #clients: Iterator<C>
  readonly #each: (client: C) => void

  constructor(clients: Iterator<C>, each: (client: C) => void) {
    this.#clients = clients
    this.#each = each
  }

  run(budget: number): number {
    let used = 0
    for (let next = this.#clients.next(); !next.done; next = this.#clients.next()) {
      this.#each(next.value)
      if (++used === budget) return used
    }
    this.done = true
    return used
  }
}
