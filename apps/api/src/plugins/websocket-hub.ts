/**
 * The in-process fan-out of Redis pub/sub to WebSocket clients, shared by /ws/prices and
 * /ws/strategies. One Redis subscriber connection per API process; a Redis channel is subscribed
 * while at least one local client wants its topic. A message is parsed once per process (its
 * sequence number, from the head) and framed once: one WebSocket text frame, header included, in
 * one Buffer (`textFrame`) that is written as is to every socket subscribed to its topic, and to no
 * other. No client costs a serialisation, a frame or a copy; the cost of an update grows with the
 * clients subscribed to it, not with every client.
 *
 * Writes are batched and chunked. The messages that arrived together (in one turn of the event
 * loop: the feed publishes ETH and BTC at once) form one batch, written client by client: a client
 * gets all of the batch's messages for it in one socket write, since on loopback and small frames
 * the write system call, not the bytes, is most of the cost. A batch is written `chunkSize` clients
 * per turn of the event loop, so thousands of sockets never hold up other I/O (the next messages,
 * pongs, client requests) for the whole burst. Batches go out in arrival order.
 *
 * Per client and topic the hub keeps the last sequence number sent, so a client sees a topic's
 * messages in sequence order with none repeated, including across the snapshot it got on
 * subscribing (messages arriving while the snapshot loads are held, then sent if newer).
 * A client whose socket buffers more than `maxBufferedBytes` is dropped (terminated) rather than
 * buffered for: a slow reader never slows the others or grows this process's memory.
 *
 * The hub is four files: this one (the subscription registry, `FanoutHub`, and each connection's
 * subscriptions, `HubClient`), websocket-fanout.ts (the batches and heartbeat runs it writes a chunk
 * at a time, over any client that is a `FanoutClient`), websocket-frames.ts (the frames built once
 * and written past `ws.send`) and websocket-stream.ts (`HubStream`, what a route fans out).
 */
import type { Redis } from 'ioredis'
import type { WebSocket } from 'ws'
import {
  Batch,
  type Delivery,
  EachClient,
  type FanoutClient,
  type Job,
  MAX_BATCH_BYTES,
  type Route,
} from './websocket-fanout'
import { TEXT, type TextFrame, textFrame, writeFrame } from './websocket-frames'
import type { HubStream } from './websocket-stream'

export { joinFrames, type TextFrame, textFrame, writeFrame } from './websocket-frames'
export type { HubStream } from './websocket-stream'

export interface HubLog {
  warn(obj: object, msg?: string): void
}

/** Messages held per topic while a snapshot loads; older ones are dropped (the snapshot supersedes them). */
const HELD_WHILE_SNAPSHOT = 64
/** Clients written per turn of the event loop (a few ms of writes), unless the hub is given another. */
export const FANOUT_CHUNK = 500

export class FanoutHub {
  readonly #subscriber: Redis
  readonly #log: HubLog
  readonly #routes = new Map<string, Route>()
  readonly #clients = new Set<HubClient>()
  readonly maxBufferedBytes: number
  readonly #chunkSize: number
  /** received messages and heartbeat runs not started yet, oldest first */
  #pending: (Delivery | EachClient<HubClient>)[] = []
  /** the job being written, a chunk per turn */
  #current: Job | undefined
  #scheduled = false
  /** batches written (messages that arrived together), since start */
  batches = 0
  /** clients dropped for buffering too much (slow consumers), since start */
  dropped = 0
  /** messages received from Redis, since start */
  received = 0

  constructor(subscriber: Redis, opts: { maxBufferedBytes: number; log: HubLog; chunkSize?: number }) {
    this.#subscriber = subscriber
    this.#log = opts.log
    this.maxBufferedBytes = opts.maxBufferedBytes
    this.#chunkSize = opts.chunkSize ?? FANOUT_CHUNK
    subscriber.on('message', (channel: string, message: string) => this.#onMessage(channel, message))
  }

  /** A connection's handle; `close()` it when the socket closes. */
  connect(socket: WebSocket): HubClient {
    const client = new HubClient(this, socket)
    this.#clients.add(client)
    return client
  }

  get clientCount(): number {
    return this.#clients.size
  }

  /** Every connected client. */
  clients(): IterableIterator<HubClient> {
    return this.#clients.values()
  }

  /** Runs `each` for every connected client, in chunks, after the messages already received (heartbeats). */
  forEachClient(each: (client: HubClient) => void): void {
    this.#pending.push(new EachClient(this.#clients.values(), each))
    this.#schedule()
  }

  /** Adds `client` to a topic, subscribing the Redis channel for the first local member. */
  async join(client: HubClient, stream: HubStream, topic: string): Promise<void> {
    const channel = stream.channelOf(topic)
    let route = this.#routes.get(channel)
    if (!route) {
      route = { stream, topic, members: new Set() }
      this.#routes.set(channel, route)
      route.members.add(client)
      await this.#subscriber.subscribe(channel)
    } else route.members.add(client)
  }

  /** Removes `client` from a topic, unsubscribing the Redis channel after its last local member. */
  leave(client: HubClient, stream: HubStream, topic: string): void {
    const channel = stream.channelOf(topic)
    const route = this.#routes.get(channel)
    if (!route) return
    route.members.delete(client)
    if (route.members.size === 0) {
      this.#routes.delete(channel)
      this.#subscriber.unsubscribe(channel).catch((err) => this.#log.warn({ err: String(err) }, 'unsubscribe failed'))
    }
  }

  /** @internal by HubClient.close */
  forget(client: HubClient): void {
    this.#clients.delete(client)
    for (const key of client.topics()) {
      const [streamName, topic] = splitKey(key)
      for (const route of this.#routes.values())
        if (route.stream.name === streamName && route.topic === topic) this.leave(client, route.stream, topic)
    }
  }

  async close(): Promise<void> {
    this.#pending = []
    this.#current = undefined
    for (const c of [...this.#clients]) c.terminate()
    this.#subscriber.disconnect()
  }

  #onMessage(channel: string, message: string): void {
    const route = this.#routes.get(channel)
    if (!route) return
    this.received++
    const seq = route.stream.seqOf(message)
    if (seq === undefined) {
      this.#log.warn({ channel }, 'malformed pub/sub message dropped')
      return
    }
    const d: Delivery = { route, key: topicKey(route.stream.name, route.topic), seq, frame: textFrame(message) }
    // nothing waits before it: it rides along with the batch being written (see Batch)
    if (this.#pending.length === 0 && this.#current instanceof Batch && this.#current.append(d)) return
    this.#pending.push(d)
    this.#schedule()
  }

  /**
   * Writing starts after the current turn's I/O: messages read together (one Redis reply can hold
   * several) form one batch. That wait is the rest of one event-loop turn, microseconds when idle.
   */
  #schedule(): void {
    if (this.#scheduled) return
    this.#scheduled = true
    setImmediate(this.#drain)
  }

  /** The next job: a heartbeat run, or the messages received before it (up to MAX_BATCH_BYTES) as a batch. */
  #nextJob(): Job | undefined {
    const head = this.#pending[0]
    if (head === undefined) return undefined
    if (head instanceof EachClient) {
      this.#pending.shift()
      return head
    }
    let n = 0
    let bytes = 0
    for (const p of this.#pending) {
      if (p instanceof EachClient || (n > 0 && bytes + p.frame.wire.length > MAX_BATCH_BYTES)) break
      bytes += p.frame.wire.length
      n++
    }
    const batch = this.#pending.splice(0, n) as Delivery[]
    return new Batch(++this.batches, batch)
  }

  readonly #drain = (): void => {
    this.#scheduled = false
    let budget = this.#chunkSize
    while (budget > 0) {
      const job = this.#current ?? this.#nextJob()
      if (!job) return
      this.#current = job
      try {
        budget -= job.run(budget)
      } catch (err) {
        // a write that throws (it should not: ws and net report errors as events) costs that client its
        // message, never the fan-out: the job resumes after it
        this.#log.warn({ err: String(err) }, 'fan-out write failed')
        budget--
      }
      if (job.done) {
        this.#current = undefined
        // the clients visited before these came still need them (the others skip them by seq)
        if (job instanceof Batch && job.late.length > 0) this.#pending.unshift(...job.late)
      }
    }
    this.#schedule()
  }
}

const topicKey = (stream: string, topic: string) => `${stream}\u0000${topic}`
const splitKey = (key: string) => key.split('\u0000') as [string, string]

/** One WebSocket connection as the hub sees it. */
export class HubClient implements FanoutClient {
  readonly #hub: FanoutHub
  readonly socket: WebSocket
  /** per topic: the last sequence number sent */
  readonly #lastSeq = new Map<string, number>()
  /** per topic whose snapshot is loading: the messages held meanwhile */
  readonly #held = new Map<string, { seq: number; frame: TextFrame }[]>()
  #closed = false
  /** answered the last ping (heartbeats use it to find dead peers) */
  alive = true
  /** @internal the last batch that handled this client */
  batchMark = 0

  constructor(hub: FanoutHub, socket: WebSocket) {
    this.#hub = hub
    this.socket = socket
    socket.on('pong', () => {
      this.alive = true
    })
  }

  get closed(): boolean {
    return this.#closed
  }

  topics(): string[] {
    return [...new Set([...this.#lastSeq.keys(), ...this.#held.keys()])]
  }

  /** Topics of `stream` this client is subscribed to. */
  topicsOf(stream: HubStream): string[] {
    return this.topics()
      .map(splitKey)
      .filter(([s]) => s === stream.name)
      .map(([, t]) => t)
  }

  isSubscribed(stream: HubStream, topic: string): boolean {
    const key = topicKey(stream.name, topic)
    return this.#lastSeq.has(key) || this.#held.has(key)
  }

  /**
   * Subscribes to `topics`, then sends what `loadSnapshot` returns (the latest raw message per
   * topic, null where none) as one frame built by `frameOf`, then the messages held meanwhile that
   * are newer. Topics already subscribed are skipped; resolves the topics newly subscribed.
   */
  async subscribe(
    stream: HubStream,
    topics: readonly string[],
    loadSnapshot: (topics: readonly string[]) => Promise<(string | null)[]>,
    frameOf: (raws: string[]) => string,
  ): Promise<string[]> {
    const fresh = topics.filter((t) => !this.isSubscribed(stream, t))
    if (fresh.length === 0 || this.#closed) return []
    for (const t of fresh) this.#held.set(topicKey(stream.name, t), [])
    await Promise.all(fresh.map((t) => this.#hub.join(this, stream, t)))
    const raws = await loadSnapshot(fresh)
    if (this.#closed) return []
    const present: string[] = []
    fresh.forEach((t, i) => {
      const raw = raws[i]
      const key = topicKey(stream.name, t)
      const seq = raw ? stream.seqOf(raw) : undefined
      this.#lastSeq.set(key, seq ?? 0)
      if (raw && seq !== undefined) present.push(raw)
    })
    this.send(frameOf(present))
    for (const t of fresh) {
      const key = topicKey(stream.name, t)
      const held = this.#held.get(key) ?? []
      this.#held.delete(key)
      for (const m of held) this.deliver(key, m.seq, m.frame)
    }
    return fresh
  }

  unsubscribe(stream: HubStream, topics: readonly string[]): void {
    for (const t of topics) {
      const key = topicKey(stream.name, t)
      if (!this.#lastSeq.delete(key) && !this.#held.delete(key)) continue
      this.#hub.leave(this, stream, t)
    }
  }

  /** @internal one message of a topic, in arrival order: sends it unless held or not newer. */
  deliver(key: string, seq: number, frame: TextFrame): void {
    if (this.accept(key, seq, frame)) this.send(frame)
  }

  /**
   * @internal by the hub: one message of a topic, in arrival order. True when the caller is to send
   * it now; false when it is held (the topic's snapshot is loading) or not newer than the last sent.
   */
  accept(key: string, seq: number, frame: TextFrame): boolean {
    if (this.#closed) return false
    const held = this.#held.get(key)
    if (held) {
      held.push({ seq, frame })
      if (held.length > HELD_WHILE_SNAPSHOT) held.shift()
      return false
    }
    const last = this.#lastSeq.get(key)
    if (last === undefined || seq <= last) return false
    this.#lastSeq.set(key, seq)
    return true
  }

  /**
   * Sends a text message (a string, or frames prepared once for many sockets), or drops the client
   * when its socket already buffers too much.
   */
  send(data: string | TextFrame): boolean {
    if (this.#closed) return false
    if (this.socket.bufferedAmount > this.#hub.maxBufferedBytes) {
      this.#hub.dropped++
      this.terminate()
      return false
    }
    if (typeof data === 'string') this.socket.send(data, TEXT)
    else writeFrame(this.socket, data)
    return true
  }

  /** Closes the socket at once (no closing handshake: a slow reader would not read it) and forgets it. */
  terminate(): void {
    this.socket.terminate()
    this.close()
  }

  /** Forgets this client's subscriptions (the socket closed). */
  close(): void {
    if (this.#closed) return
    this.#closed = true
    this.#hub.forget(this)
    this.#lastSeq.clear()
    this.#held.clear()
  }
}
