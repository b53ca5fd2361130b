/**
 * WS /ws/prices (spec 4.2; docs/market-data.md "WebSocket"): on connect a snapshot of the assets
 * asked for (`?assets=ETH,BTC`, default all) from the latest updates in Redis, then every update
 * the feed publishes for them, in sequence order; `subscribe` / `unsubscribe` / `ping` ops; a
 * heartbeat from the websocket plugin. A malformed message gets an error message and the
 * connection stays open. Updates are forwarded as the feed published them (no per-client work).
 */

import { WsPricesQuery } from '@wh/api-schemas/market'
import {
  type ClientMessage,
  ClientMessage as ClientMessageSchema,
  type MarketNames,
  PRICED_ASSETS,
  readLatestPrices,
} from '@wh/market'
import type { FastifyInstance } from 'fastify'
import type { Redis } from 'ioredis'
import type Type from 'typebox'
import Value from 'typebox/value'
import { errorBody } from '../../plugins/errors'
import type { HubClient, HubStream } from '../../plugins/websocket-hub'

export interface WsPricesOptions {
  redis: Redis
  names: MarketNames
}

/** Client text frames above this get MESSAGE_TOO_LARGE (the connection stays open). */
const MAX_CLIENT_MESSAGE_CHARS = 1_024
const PRICED: ReadonlySet<string> = new Set(PRICED_ASSETS.map((a) => a.symbol))
const SEQ = /^\{"type":"price","asset":"[A-Z0-9]+","seq":(\d+),/

const errorFrame = (code: string, message: string) => JSON.stringify({ type: 'error', code, message })

export async function wsPricesRoute(app: FastifyInstance, opts: WsPricesOptions) {
  const stream: HubStream = {
    name: 'prices',
    channelOf: (asset) => opts.names.priceChannel(asset),
    // the feed writes the head of every update itself (channels.ts): read seq without a full parse
    seqOf: (raw) => {
      const m = SEQ.exec(raw)
      return m ? Number(m[1]) : undefined
    },
  }
  const loadSnapshot = (assets: readonly string[]) => readLatestPrices(opts.redis, opts.names, assets)
  const snapshotFrame = (raws: string[]) => `{"type":"snapshot","channel":"prices","updates":[${raws.join(',')}]}`

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

  async function subscribe(client: HubClient, assets: string[]) {
    await client.subscribe(stream, assets, loadSnapshot, snapshotFrame)
    if (!client.closed)
      client.send(JSON.stringify({ type: 'subscribed', channel: 'prices', assets: client.topicsOf(stream) }))
  }

  async function onMessage(client: HubClient, data: Buffer, isBinary: boolean) {
    if (isBinary) return client.send(errorFrame('MALFORMED_MESSAGE', 'send JSON text frames'))
    if (data.length > MAX_CLIENT_MESSAGE_CHARS)
      return client.send(errorFrame('MESSAGE_TOO_LARGE', `at most ${MAX_CLIENT_MESSAGE_CHARS} bytes per message`))
    let msg: unknown
    try {
      msg = JSON.parse(data.toString('utf8'))
    } catch {
      return client.send(errorFrame('MALFORMED_MESSAGE', 'not JSON'))
    }
    if (!Value.Check(ClientMessageSchema, msg))
      return client.send(
        errorFrame('MALFORMED_MESSAGE', 'expected {"op":"subscribe"|"unsubscribe","assets":[...]} or {"op":"ping"}'),
      )
    const m = msg as ClientMessage
    if (m.op === 'ping') return client.send('{"type":"pong"}')
    const parsed = parseAssets(m.assets)
    if ('unknown' in parsed) return client.send(errorFrame('UNKNOWN_ASSET', `unknown asset ${parsed.unknown}`))
    if (m.op === 'subscribe') return subscribe(client, parsed.assets)
    client.unsubscribe(stream, parsed.assets)
    return client.send(JSON.stringify({ type: 'unsubscribed', channel: 'prices', assets: client.topicsOf(stream) }))
  }

  // handler + wsHandler (not `websocket: true`, which hides the route): the OpenAPI document lists
  // /ws/prices, and a plain GET without the upgrade gets 426 in the error shape
  app.route<{ Querystring: Type.Static<typeof WsPricesQuery> }>({
    method: 'GET',
    url: '/ws/prices',
    schema: {
      tags: ['market'],
      summary: 'WebSocket: price snapshot, then throttled updates with sequence numbers (docs/market-data.md)',
      description:
        'Upgrade to a WebSocket. Server messages: snapshot {type,channel,updates:PriceUpdate[]}, PriceUpdate ' +
        '{type:"price",asset,seq,ts,index,mark,atmIv,instruments}, subscribed/unsubscribed {type,channel,assets}, ' +
        'heartbeat {type,ts}, pong, error {type,code,message}. Client messages: ' +
        '{op:"subscribe"|"unsubscribe",assets:[...]}, {op:"ping"}. Schemas: components PriceUpdate, WsSnapshot, ' +
        'WsSubscribed, WsHeartbeat, WsPong, WsError, WsClientMessage.',
      querystring: WsPricesQuery,
      response: { 426: { $ref: 'ErrorBody#' } },
    },
    handler: async (_request, reply) =>
      reply
        .code(426)
        .header('upgrade', 'websocket')
        .send(errorBody(426, 'UPGRADE_REQUIRED', 'Connect with a WebSocket')),
    wsHandler: (socket, request) => {
      const client = app.fanout.connect(socket)
      socket.on('close', () => client.close())
      socket.on('error', () => client.close())
      socket.on('message', (data: Buffer, isBinary: boolean) => {
        onMessage(client, data, isBinary).catch((err) => {
          request.log.warn({ err: String(err) }, 'ws/prices message failed')
          client.send(errorFrame('MALFORMED_MESSAGE', 'could not handle the message'))
        })
      })
      const initial = request.query.assets?.split(',').filter(Boolean) ?? [...PRICED]
      const parsed = parseAssets(initial)
      if ('unknown' in parsed) {
        client.send(errorFrame('UNKNOWN_ASSET', `unknown asset ${parsed.unknown}`))
        return
      }
      subscribe(client, parsed.assets).catch((err) =>
        request.log.warn({ err: String(err) }, 'ws/prices snapshot failed'),
      )
    },
  })
}
