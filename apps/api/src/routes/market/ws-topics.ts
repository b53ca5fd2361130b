/**
 * What /ws/prices and /ws/strategies share (docs/market-data.md "WebSocket"): a client subscribes
 * to assets, gets their snapshot and then the stream's messages in sequence order through the
 * hub; `subscribe` / `unsubscribe` / `ping` ops; a malformed message gets an error message and the
 * connection stays open; a plain GET without the upgrade answers 426 in the error shape. Each
 * route supplies its stream, its snapshot and the snapshot's frame.
 */
import {
  type ClientMessage,
  ClientMessage as ClientMessageSchema,
  clientMessageName,
  type ErrorMessage,
  PRICED_ASSETS,
} from '@wh/market'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Static } from 'typebox'
import Value from 'typebox/value'
import { errorBody } from '../../plugins/errors'
import type { HubClient, HubStream } from '../../plugins/websocket-hub'

/** Client text frames above this get MESSAGE_TOO_LARGE (the connection stays open). */
export const MAX_CLIENT_MESSAGE_CHARS = 1_024
const PRICED: ReadonlySet<string> = new Set(PRICED_ASSETS.map((a) => a.symbol))

type ErrorCode = Static<typeof ErrorMessage>['code']

/**
 * The `error` messages a topic socket sends, each with its code (the AsyncAPI document,
 * routes/market/ws-channels.ts, lists them from here). The connection stays open after each.
 */
export const WS_ERRORS = {
  binary: { code: 'MALFORMED_MESSAGE', message: 'send JSON text frames' },
  tooLarge: { code: 'MESSAGE_TOO_LARGE', message: `at most ${MAX_CLIENT_MESSAGE_CHARS} bytes per message` },
  notJson: { code: 'MALFORMED_MESSAGE', message: 'not JSON' },
  notAnOp: {
    code: 'MALFORMED_MESSAGE',
    message:
      'expected {"type":"subscribe"|"unsubscribe","assets":[...]} or {"type":"ping"} ("op" in place of "type" is read too)',
  },
  failed: { code: 'MALFORMED_MESSAGE', message: 'could not handle the message' },
  unknownAsset: { code: 'UNKNOWN_ASSET', message: 'unknown asset ' },
} as const satisfies Record<string, { code: ErrorCode; message: string }>

/** An error message; `detail` follows the message (the unknown asset's name). */
export const errorFrame = (e: (typeof WS_ERRORS)[keyof typeof WS_ERRORS], detail = '') =>
  JSON.stringify({ type: 'error', code: e.code, message: `${e.message}${detail}` })

export interface TopicSocketOptions {
  /** the `channel` of subscribed/unsubscribed/snapshot messages */
  readonly channel: string
  readonly stream: HubStream
  readonly loadSnapshot: (assets: readonly string[]) => Promise<(string | null)[]>
  readonly snapshotFrame: (raws: string[]) => string
}

/** Upper-cased assets, or the first unknown one. */
function parseAssets(list: readonly string[]): { assets: string[] } | { unknown: string } {
  const assets: string[] = []
  for (const raw of list) {
    const a = raw.trim().toUpperCase()
    if (!PRICED.has(a)) return { unknown: raw }
    if (!assets.includes(a)) assets.push(a)
  }
  return { assets }
}

/** The `handler` (426) and `wsHandler` of a topic WebSocket route. */
export function topicSocket(app: FastifyInstance, o: TopicSocketOptions) {
  async function subscribe(client: HubClient, assets: string[]) {
    await client.subscribe(o.stream, assets, o.loadSnapshot, o.snapshotFrame)
    if (!client.closed)
      client.send(JSON.stringify({ type: 'subscribed', channel: o.channel, assets: client.topicsOf(o.stream) }))
  }

  async function onMessage(client: HubClient, data: Buffer, isBinary: boolean) {
    if (isBinary) return client.send(errorFrame(WS_ERRORS.binary))
    if (data.length > MAX_CLIENT_MESSAGE_CHARS) return client.send(errorFrame(WS_ERRORS.tooLarge))
    let msg: unknown
    try {
      msg = JSON.parse(data.toString('utf8'))
    } catch {
      return client.send(errorFrame(WS_ERRORS.notJson))
    }
    if (!Value.Check(ClientMessageSchema, msg)) return client.send(errorFrame(WS_ERRORS.notAnOp))
    const m = msg as ClientMessage
    const name = clientMessageName(m)
    if (name === 'ping' || !('assets' in m)) return client.send('{"type":"pong"}')
    const parsed = parseAssets(m.assets)
    if ('unknown' in parsed) return client.send(errorFrame(WS_ERRORS.unknownAsset, parsed.unknown))
    if (name === 'subscribe') return subscribe(client, parsed.assets)
    client.unsubscribe(o.stream, parsed.assets)
    return client.send(JSON.stringify({ type: 'unsubscribed', channel: o.channel, assets: client.topicsOf(o.stream) }))
  }

  return {
    handler: async (_request: FastifyRequest, reply: FastifyReply) =>
      reply
        .code(426)
        .header('upgrade', 'websocket')
        .send(errorBody(426, 'UPGRADE_REQUIRED', 'Connect with a WebSocket')),
    wsHandler: (socket: import('ws').WebSocket, request: FastifyRequest<{ Querystring: { assets?: string } }>) => {
      const client = app.fanout.connect(socket)
      socket.on('close', () => client.close())
      socket.on('error', () => client.close())
      socket.on('message', (data: Buffer, isBinary: boolean) => {
        onMessage(client, data, isBinary).catch((err) => {
          request.log.warn({ err: String(err) }, `ws/${o.channel} message failed`)
          client.send(errorFrame(WS_ERRORS.failed))
        })
      })
      const initial = request.query.assets?.split(',').filter(Boolean) ?? [...PRICED]
      const parsed = parseAssets(initial)
      if ('unknown' in parsed) {
        client.send(errorFrame(WS_ERRORS.unknownAsset, parsed.unknown))
        return
      }
      subscribe(client, parsed.assets).catch((err) =>
        request.log.warn({ err: String(err) }, `ws/${o.channel} snapshot failed`),
      )
    },
  }
}
