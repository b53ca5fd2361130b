/**
 * /ws/prices and /ws/strategies as channels of the AsyncAPI document (plugins/asyncapi.ts,
 * docs/market-data.md "The AsyncAPI document"): their messages are the TypeBox schemas the routes
 * send and validate (ws-topics.ts, ws-prices.ts, strategies-ws.ts), their error messages the ones
 * ws-topics.ts sends, their limits and close codes the constants the code uses.
 */

import { WsPricesQuery } from '@wh/api-schemas/market'
import { StrategySnapshotMessage, StrategyStateMessage, WsStrategiesQuery } from '@wh/api-schemas/strategies'
import {
  ClientMessage,
  ErrorMessage,
  HeartbeatMessage,
  PongMessage,
  PRICED_ASSETS,
  PriceUpdate,
  SnapshotMessage,
  StrategyEvent,
  SubscribedMessage,
} from '@wh/market'
import type { WsChannel, WsCloseCode, WsMessage } from '../../plugins/asyncapi-document'
import { HEARTBEAT_MS, MAX_BUFFERED_BYTES, MAX_CLIENT_FRAME_BYTES } from '../../plugins/websocket'
import { MAX_CLIENT_MESSAGE_CHARS, WS_ERRORS } from './ws-topics'

const KIB = 1024
const ASSETS = PRICED_ASSETS.map((a) => a.symbol).join(', ')
const TS = '2026-01-05T09:00:15.000Z'

/** When each error of ws-topics.ts is sent (typed by its keys: a new error needs a line here). */
const WHEN: Record<keyof typeof WS_ERRORS, string> = {
  binary: 'a binary frame',
  tooLarge: `a text frame over ${MAX_CLIENT_MESSAGE_CHARS / KIB} KiB (and up to ${MAX_CLIENT_FRAME_BYTES / KIB} KiB)`,
  notJson: 'a text frame that is not JSON',
  notAnOp: 'JSON that is not one of the client messages',
  failed: 'the server failed to handle a valid message (its snapshot could not be read)',
  unknownAsset: `an asset that is not priced (${ASSETS}), in a message or in ?assets= on connect (nothing is subscribed then)`,
}

/** How the server closes a topic socket: what the code and its `ws` server really do. */
export const TOPIC_CLOSE_CODES: readonly WsCloseCode[] = [
  {
    code: 1000,
    reason: 'the client closed the connection (normally): the server answers the closing handshake with its code',
  },
  {
    code: 1005,
    reason:
      'the API process shuts down: a close frame without a status code, then the socket is dropped (a client may see 1006 when the drop wins)',
  },
  {
    code: 1006,
    reason:
      `no close frame: the server dropped the connection, because its socket buffered more than ${MAX_BUFFERED_BYTES / KIB} KiB ` +
      '(a slow reader) or no pong answered the previous heartbeat ping; reconnect for a fresh snapshot',
  },
  {
    code: 1009,
    reason: `a client frame over ${MAX_CLIENT_FRAME_BYTES / KIB} KiB (the socket's maxPayload); smaller frames over ${MAX_CLIENT_MESSAGE_CHARS / KIB} KiB get MESSAGE_TOO_LARGE`,
  },
  { code: 1002, reason: 'a frame that breaks RFC 6455 (e.g. unmasked), refused by the ws server' },
  { code: 1007, reason: 'a text frame that is not UTF-8, refused by the ws server' },
]

// each client message is a union of its two spellings: `{type}` (the three sockets' dialect), `{op}` (the earlier one)
const [subscribeSchema, unsubscribeSchema, pingSchema] = (ClientMessage as unknown as { anyOf: object[] }).anyOf as [
  object,
  object,
  object,
]

const subscribe: WsMessage = {
  id: 'Subscribe',
  name: 'subscribe',
  title: 'Subscribe',
  summary: 'Adds assets (case-insensitive): their snapshot, then their messages, then a `subscribed` ack.',
  description:
    'Assets already subscribed are skipped. An unknown asset gets an UNKNOWN_ASSET error and changes nothing.',
  payload: subscribeSchema,
  schemaName: 'WsSubscribe',
  examples: [
    { name: 'btc', payload: { type: 'subscribe', assets: ['BTC'] } },
    { name: 'btc, earlier spelling', payload: { op: 'subscribe', assets: ['BTC'] } },
  ],
}
const unsubscribe: WsMessage = {
  id: 'Unsubscribe',
  name: 'unsubscribe',
  title: 'Unsubscribe',
  summary: 'Stops the messages of assets, then an `unsubscribed` ack.',
  payload: unsubscribeSchema,
  schemaName: 'WsUnsubscribe',
  examples: [{ name: 'eth', payload: { type: 'unsubscribe', assets: ['ETH'] } }],
}
const ping: WsMessage = {
  id: 'Ping',
  name: 'ping',
  title: 'Ping',
  summary: 'Asks for a `pong` (an application-level ping; protocol pings are answered too).',
  payload: pingSchema,
  schemaName: 'WsPing',
  examples: [{ name: 'ping', payload: { type: 'ping' } }],
}
const pong: WsMessage = {
  id: 'Pong',
  name: 'pong',
  title: 'Pong',
  summary: 'The answer to a `ping` message.',
  payload: PongMessage,
  examples: [{ name: 'pong', payload: { type: 'pong' } }],
}
const heartbeat: WsMessage = {
  id: 'Heartbeat',
  name: 'heartbeat',
  title: 'Heartbeat',
  summary: `Every ${HEARTBEAT_MS / 1000} s (the default), with a protocol ping frame before it.`,
  description:
    'One timer per API process. A connection that did not answer the previous protocol ping with a pong frame ' +
    '(browsers and ws clients do so by themselves) is dropped (1006).',
  payload: HeartbeatMessage,
  examples: [{ name: 'heartbeat', payload: { type: 'heartbeat', ts: TS } }],
}
const error: WsMessage = {
  id: 'Error',
  name: 'error',
  title: 'Error',
  summary: 'A client message was refused; the connection stays open and nothing else changed.',
  description: `| code | message | sent for |\n| --- | --- | --- |\n${(
    Object.entries(WS_ERRORS) as [keyof typeof WS_ERRORS, (typeof WS_ERRORS)[keyof typeof WS_ERRORS]][]
  )
    .map(([k, e]) => `| ${e.code} | \`${e.message}${k === 'unknownAsset' ? '<asset>' : ''}\` | ${WHEN[k]} |`)
    .join('\n')}`,
  payload: ErrorMessage,
  examples: (Object.entries(WS_ERRORS) as [keyof typeof WS_ERRORS, (typeof WS_ERRORS)[keyof typeof WS_ERRORS]][]).map(
    ([k, e]) => ({
      name: k,
      summary: WHEN[k],
      payload: { type: 'error', code: e.code, message: `${e.message}${k === 'unknownAsset' ? 'DOGE' : ''}` },
    }),
  ),
}

/** The ack messages of a channel: the shared WsSubscribed schema, narrowed to the ack and the channel. */
function acks(channel: string): [WsMessage, WsMessage] {
  const Channel = channel[0]?.toUpperCase() + channel.slice(1)
  return [
    {
      id: `${Channel}Subscribed`,
      name: 'subscribed',
      title: 'Subscribed',
      summary: 'After a subscribe (and on connect): every asset the connection is subscribed to now.',
      payload: SubscribedMessage,
      narrow: { type: 'subscribed', channel },
      examples: [{ name: 'both', payload: { type: 'subscribed', channel, assets: ['ETH', 'BTC'] } }],
    },
    {
      id: `${Channel}Unsubscribed`,
      name: 'unsubscribed',
      title: 'Unsubscribed',
      summary: 'After an unsubscribe: every asset the connection is still subscribed to.',
      payload: SubscribedMessage,
      narrow: { type: 'unsubscribed', channel },
      examples: [{ name: 'btc left', payload: { type: 'unsubscribed', channel, assets: ['BTC'] } }],
    },
  ]
}

const TOPIC_REPLIES = {
  subscribe: ['snapshot', 'subscribed', 'error'],
  unsubscribe: ['unsubscribed', 'error'],
  ping: ['pong'],
} as const

const TOPIC_RULES =
  `On connect the server subscribes the assets of \`?assets=\` (default: every priced asset: ${ASSETS}): ` +
  'a `snapshot`, then a `subscribed` ack. Each asset’s messages arrive in increasing `seq`, never repeated, ' +
  'none older than its snapshot. A plain GET without the upgrade answers 426 UPGRADE_REQUIRED in the ' +
  'HTTP error shape. Client messages are JSON text frames of at most ' +
  `${MAX_CLIENT_MESSAGE_CHARS} bytes.`

const priceExample = {
  type: 'price',
  asset: 'ETH',
  seq: 1042,
  ts: '2026-01-05T09:00:01.000Z',
  publishedAt: '2026-01-05T09:00:01.012Z',
  index: '3005.5',
  mark: '3005.5',
  atmIv: '0.6',
  instruments: [
    {
      name: 'ETH-PERP',
      kind: 'perp',
      strike: null,
      expiry: null,
      optionType: null,
      bid: '3004',
      ask: '3007',
      mark: '3005.5',
      iv: null,
      delta: null,
    },
    {
      name: 'ETH-20260106-3000-C',
      kind: 'option',
      strike: '3000',
      expiry: '2026-01-06T08:00:00.000Z',
      optionType: 'C',
      bid: '41.2',
      ask: '43.8',
      mark: '42.5',
      iv: '0.6',
      delta: '0.53',
    },
  ],
}

export const PRICES_CHANNEL: WsChannel = {
  id: 'prices',
  address: '/ws/prices',
  title: 'Prices',
  description: `Index, perp mark and at-the-money options of each asset, as the price feed publishes them (docs/market-data.md). ${TOPIC_RULES}`,
  query: WsPricesQuery,
  receives: [subscribe, unsubscribe, ping],
  sends: [
    {
      id: 'PricesSnapshot',
      name: 'snapshot',
      title: 'Price snapshot',
      summary:
        'On connect and on each subscribe: the latest update of each asset just subscribed (none yet: left out).',
      payload: SnapshotMessage,
      examples: [{ name: 'eth', payload: { type: 'snapshot', channel: 'prices', updates: [priceExample] } }],
    },
    {
      id: 'PriceUpdate',
      name: 'price',
      title: 'Price update',
      summary: 'A full state of one asset (not a delta), forwarded byte for byte as the feed published it.',
      payload: PriceUpdate,
      examples: [{ name: 'eth', payload: priceExample }],
    },
    ...acks('prices'),
    heartbeat,
    pong,
    error,
  ],
  replies: TOPIC_REPLIES,
  closeCodes: TOPIC_CLOSE_CODES,
}

interface EventVariant {
  description: string
  properties: { event: { const: string } }
}

/** One message per strategy event (the variants of StrategyEvent, by their `event`). */
function strategyEventMessages(): WsMessage[] {
  const examples: Record<string, object> = {
    cycle_opened: {
      strike: '2700',
      strategy: 'put',
      side: 'put',
      instrument: 'ETH-20260109-2700-P',
      expiry: '2026-01-09T08:00:00.000Z',
      mark: '31.2',
      index: '3000',
      iv: '0.62',
      delta: '-0.21',
    },
    order: { strategy: 'put', instrument: 'ETH-20260109-2700-P', step: 'repriced', price: '30.9' },
    signal: { sides: ['put'], action: 'pause', reason: 'vol spike' },
  }
  return ((StrategyEvent as unknown as { anyOf: EventVariant[] }).anyOf ?? []).map((variant) => {
    const event = variant.properties.event.const
    const Event = event.replace(/(?:^|_)([a-z])/g, (_m, c: string) => c.toUpperCase())
    const example = examples[event]
    return {
      id: `Strategy${Event}`,
      name: `strategy_${event}`,
      title: `Strategy event: ${event}`,
      summary: variant.description,
      payload: variant,
      schemaName: `StrategyEvent${Event}`,
      ...(example && {
        examples: [{ name: event, payload: { type: 'strategy', asset: 'ETH', seq: 42, ts: TS, event, ...example } }],
      }),
    }
  })
}

const strategySnapshotExample = {
  type: 'snapshot',
  channel: 'strategies',
  states: [
    {
      type: 'strategy_state',
      asset: 'ETH',
      seq: 41,
      ts: TS,
      strategies: [
        {
          id: 'eth-put',
          kind: 'put',
          liveCycles: 0,
          currentCycle: null,
          currentCycleNote: 'no option near the target delta is cached',
        },
      ],
      signals: { put: 'active', call: 'paused' },
    },
  ],
}

export const STRATEGIES_CHANNEL: WsChannel = {
  id: 'strategies',
  address: '/ws/strategies',
  title: 'Strategies',
  description:
    'The platform’s strategy per asset, aggregated over every user: each asset’s state, then every strategy ' +
    `event the worker and the signals route publish (docs/market-data.md). ${TOPIC_RULES}`,
  query: WsStrategiesQuery,
  receives: [subscribe, unsubscribe, ping],
  sends: [
    {
      id: 'StrategiesSnapshot',
      name: 'snapshot',
      title: 'Strategy snapshot',
      summary:
        'On connect and on each subscribe: each asset’s strategies and signals, stamped with its last event `seq`.',
      payload: StrategySnapshotMessage,
      examples: [{ name: 'eth', payload: strategySnapshotExample }],
    },
    ...strategyEventMessages(),
    ...acks('strategies'),
    heartbeat,
    pong,
    error,
  ],
  replies: TOPIC_REPLIES,
  closeCodes: TOPIC_CLOSE_CODES,
}

/** Unions a client may want whole, and schemas referenced by `$id` only (the snapshot's states). */
export const MARKET_WS_SCHEMAS: readonly object[] = [ClientMessage, StrategyEvent, StrategyStateMessage]
