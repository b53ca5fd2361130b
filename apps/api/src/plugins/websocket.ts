/**
 * WebSockets for the whole API: registers @fastify/websocket and the process's one FanoutHub
 * (websocket-hub.ts) over its own Redis subscriber connection, and sends the heartbeats of every
 * connection from one timer: a protocol ping plus a `{"type":"heartbeat"}` message, framed once
 * and written to each socket in one write (in chunks, like every fan-out); a peer that did not
 * answer the previous ping is terminated. permessage-deflate stays off: compressing would cost a
 * deflate per socket and message, and forbid writing one prepared frame to every socket.
 * Routes reach the hub as `app.fanout`.
 */
import websocket from '@fastify/websocket'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Redis } from 'ioredis'
import { BEARER_PROTOCOL } from '../routes/account-ws/protocol'
import { FanoutHub, textFrame } from './websocket-hub'

/** Heartbeat period (tests shorten it). */
export const HEARTBEAT_MS = 15_000
/** A client whose socket buffers more than this is dropped (slow consumer). */
export const MAX_BUFFERED_BYTES = 256 * 1024
/** Largest client frame the server reads; a larger one closes that connection (1009), never the server. */
export const MAX_CLIENT_FRAME_BYTES = 16 * 1024

export interface WebsocketPluginOptions {
  /** the API's Redis connection; the hub subscribes on a duplicate of it */
  redis: Redis
  heartbeatMs?: number
  maxBufferedBytes?: number
}

declare module 'fastify' {
  interface FastifyInstance {
    fanout: FanoutHub
  }
}

export const websocketPlugin = fp(async (app: FastifyInstance, opts: WebsocketPluginOptions) => {
  await app.register(websocket, {
    options: {
      maxPayload: MAX_CLIENT_FRAME_BYTES,
      perMessageDeflate: false,
      // the one subprotocol the API speaks: WS /ws/account's token carrier, echoed so a browser accepts
      // the connection; the token itself (the other protocol offered) is never echoed
      handleProtocols: (protocols: Set<string>) => (protocols.has(BEARER_PROTOCOL) ? BEARER_PROTOCOL : false),
    },
  })
  // one subscriber per process: a connection in subscribe mode can do nothing else
  const subscriber = opts.redis.duplicate({ maxRetriesPerRequest: null, enableOfflineQueue: true, lazyConnect: false })
  subscriber.on('error', (err) => app.log.warn({ err: String(err) }, 'redis subscriber error'))
  const hub = new FanoutHub(subscriber, { maxBufferedBytes: opts.maxBufferedBytes ?? MAX_BUFFERED_BYTES, log: app.log })
  app.decorate('fanout', hub)

  const heartbeatMs = opts.heartbeatMs ?? HEARTBEAT_MS
  const timer = setInterval(() => {
    const frame = textFrame(`{"type":"heartbeat","ts":"${new Date().toISOString()}"}`, { ping: true })
    hub.forEachClient((client) => {
      if (!client.alive) client.terminate()
      else {
        client.alive = false
        client.send(frame)
      }
    })
  }, heartbeatMs)
  timer.unref()

  app.addHook('onClose', async () => {
    clearInterval(timer)
    await hub.close()
  })
})
