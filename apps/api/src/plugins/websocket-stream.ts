/**
 * What the hub fans out (websocket-hub.ts explains the whole). A leaf of its own because the hub,
 * its batches (websocket-fanout.ts) and the routes that serve a stream all name it, and the batches
 * must not import the hub that runs them.
 */

/** One kind of stream a WebSocket route serves ('prices', later 'strategies'). */
export interface HubStream {
  readonly name: string
  /** the Redis channel of a topic (an asset) */
  channelOf(topic: string): string
  /** the sequence number of a raw message; undefined drops the message (malformed) */
  seqOf(raw: string): number | undefined
}
