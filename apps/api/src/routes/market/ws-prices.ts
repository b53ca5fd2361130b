/**
 * WS /ws/prices (spec 4.2; docs/market-data.md "WebSocket"): on connect a snapshot of the assets
 * asked for (`?assets=ETH,BTC`, default all) from the latest updates in Redis, then every update
 * the feed publishes for them, in sequence order; `subscribe` / `unsubscribe` / `ping` ops; a
 * heartbeat from the websocket plugin. A malformed message gets an error message and the
 * connection stays open. Updates are forwarded as the feed published them (no per-client work).
 */

import { WsPricesQuery } from '@wh/api-schemas/market'
import { type MarketNames, readLatestPrices } from '@wh/market'
import type { FastifyInstance } from 'fastify'
import type { Redis } from 'ioredis'
import type Type from 'typebox'
import type { HubStream } from '../../plugins/websocket-hub'
import { topicSocket } from './ws-topics'

export interface WsPricesOptions {
  redis: Redis
  names: MarketNames
}

const SEQ = /^\{"type":"price","asset":"[A-Z0-9]+","seq":(\d+),/

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
    ...topicSocket(app, { channel: 'prices', stream, loadSnapshot, snapshotFrame }),
  })
}
