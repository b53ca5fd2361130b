/**
 * The in-process fan-out of Redis pub/sub to WebSocket clients, shared by /ws/prices and (later)
 * /ws/strategies. One Redis subscriber connection per API process; a Redis channel is subscribed
 * while at least one local client wants its topic. A message is parsed once per process, turned
 * into one Buffer, and written to the sockets subscribed to its topic only: the cost of an update
 * grows with the clients subscribed to it, not with every client.
 *
 * Per client and topic the hub keeps the last sequence number sent, so a client sees a topic's
 * messages in sequence order with none repeated, including across the snapshot it got on
 * subscribing (messages arriving while the snapshot loads are held, then sent if newer).
 * A client whose socket buffers more than `maxBufferedBytes` is dropped (terminated) rather than
 * buffered for: a slow reader never slows the others or grows this process's memory.
 */
import type { Redis } from 'ioredis'
import type { WebSocket } from 'ws'

/** One kind of stream a WebSocket route serves ('prices', later 'strategies'). */
export interface HubStream {
  readonly name: string
  /** the Redis channel of a topic (an asset) */
  channelOf(topic: string): string
  /** the sequence number of a raw message; undefined drops the message (malformed) */
  seqOf(raw: string): number | undefined
}

export interface HubLog {
  warn(obj: object, msg?: string): void
}

/** Messages held per topic while a snapshot loads; older ones are dropped (the snapshot supersedes them). */
const HELD_WHILE_SNAPSHOT = 64

interface Route {
  readonly stream: HubStream
  readonly topic: string
  readonly members: Set<HubClient>
}

export class FanoutHub {
  readonly #subscriber: Redis
  readonly #log: HubLog
  readonly #routes = new Map<string, Route>()
  readonly #clients = new Set<HubClient>()
  readonly maxBufferedBytes: number
  /** clients dropped for buffering too much (slow consumers), since start */
  dropped = 0
  /** messages received from Redis, since start */
  received = 0

  constructor(subscriber: Redis, opts: { maxBufferedBytes: number; log: HubLog }) {
    this.#subscriber = subscriber
    this.#log = opts.log
    this.maxBufferedBytes = opts.maxBufferedBytes
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

  /** Every connected client (heartbeats). */
  clients(): IterableIterator<HubClient> {
    return this.#clients.values()
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
    const frame = Buffer.from(message)
    const key = topicKey(route.stream.name, route.topic)
    for (const member of route.members) member.deliver(key, seq, frame)
  }
}

const topicKey = (stream: string, topic: string) => `${stream}\u0000${topic}`
const splitKey = (key: string) => key.split('\u0000') as [string, string]

/** One WebSocket connection as the hub sees it. */
export class HubClient {
  readonly #hub: FanoutHub
  readonly socket: WebSocket
  /** per topic: the last sequence number sent */
  readonly #lastSeq = new Map<string, number>()
  /** per topic whose snapshot is loading: the messages held meanwhile */
  readonly #held = new Map<string, { seq: number; frame: Buffer }[]>()
  #closed = false
  /** answered the last ping (heartbeats use it to find dead peers) */
  alive = true

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

  /** @internal by the hub: one message of a topic, in arrival order. */
  deliver(key: string, seq: number, frame: Buffer): void {
    const held = this.#held.get(key)
    if (held) {
      held.push({ seq, frame })
      if (held.length > HELD_WHILE_SNAPSHOT) held.shift()
      return
    }
    const last = this.#lastSeq.get(key)
    if (last === undefined || seq <= last) return
    this.#lastSeq.set(key, seq)
    this.send(frame)
  }

  /** Sends one text frame, or drops the client when its socket already buffers too much. */
  send(data: string | Buffer): boolean {
    if (this.#closed) return false
    if (this.socket.bufferedAmount > this.#hub.maxBufferedBytes) {
      this.#hub.dropped++
      this.terminate()
      return false
    }
    this.socket.send(data, { binary: false })
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
