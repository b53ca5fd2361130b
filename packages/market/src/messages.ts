/**
 * Message shapes of the price fan-out (TypeBox), published in docs/market-data.md:
 * - `PriceUpdate` is what the worker publishes on Redis pub/sub AND what a /ws/prices client
 *   receives, byte for byte (the API forwards the string it got; it serialises nothing per client).
 * - the client → server ops and the server's own messages (snapshot, heartbeat, ack, error).
 * Prices are decimal strings; iv and delta are the exchange's display figures (strings, never
 * used in arithmetic). `seq` grows by one per published update of an asset, across feed holders.
 */
import Type, { type Static } from 'typebox'

const Decimal = (description: string) => Type.String({ pattern: '^-?[0-9]+(\\.[0-9]+)?$', description })
const DisplayFigure = (description: string) =>
  Type.Union([Type.String({ pattern: '^-?[0-9]+(\\.[0-9]+)?$' }), Type.Null()], {
    description: `${description}; display only (the exchange's figure), null when unknown`,
  })

export const PriceInstrument = Type.Object(
  {
    name: Type.String({ description: 'exchange instrument name, e.g. ETH-20260130-3000-C or ETH-PERP' }),
    kind: Type.Union([Type.Literal('perp'), Type.Literal('option')]),
    strike: Type.Union([Decimal('strike, USD'), Type.Null()]),
    expiry: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    optionType: Type.Union([Type.Literal('C'), Type.Literal('P'), Type.Null()]),
    bid: Decimal('best bid, USD'),
    ask: Decimal('best ask, USD'),
    mark: Decimal('mark price, USD'),
    iv: DisplayFigure('implied volatility as a fraction (0.6 = 60 %)'),
    delta: DisplayFigure('option delta'),
  },
  { $id: 'PriceInstrument', additionalProperties: false },
)
export type PriceInstrument = Static<typeof PriceInstrument>

export const PriceUpdate = Type.Object(
  {
    type: Type.Literal('price'),
    asset: Type.String({ description: 'underlying symbol, e.g. ETH' }),
    seq: Type.Integer({ minimum: 1, description: 'per-asset sequence number, +1 per update' }),
    ts: Type.String({ format: 'date-time', description: 'exchange time of the latest tick folded in' }),
    publishedAt: Type.String({ format: 'date-time', description: 'when the feed published this update (its clock)' }),
    index: Decimal('index price, USD'),
    mark: Decimal('perp mark price, USD'),
    atmIv: DisplayFigure('implied volatility of the at-the-money option nearest expiry'),
    instruments: Type.Array(PriceInstrument, {
      description:
        'the perp, the at-the-money options (nearest expiry first), then the options of live positions (by name)',
    }),
  },
  { $id: 'PriceUpdate', additionalProperties: false },
)
export type PriceUpdate = Static<typeof PriceUpdate>

/** Topics a client subscribes to are asset symbols (the same for /ws/strategies). */
const Assets = Type.Array(Type.String({ minLength: 1, maxLength: 16 }), { minItems: 1, maxItems: 16 })

/**
 * What a client sends: `{type}`, the one dialect of the three sockets (the server's messages and
 * /ws/account's all name themselves by `type`). `{op}` is the earlier spelling of the same three
 * messages, still accepted so clients written against it keep working (docs/market-data.md).
 */
const spellings = <N extends string, F extends Type.TProperties>(name: N, fields: F) =>
  Type.Union([
    Type.Object({ type: Type.Literal(name), ...fields }, { additionalProperties: false }),
    Type.Object({ op: Type.Literal(name), ...fields }, { additionalProperties: false }),
  ])
export const ClientMessage = Type.Union(
  [spellings('subscribe', { assets: Assets }), spellings('unsubscribe', { assets: Assets }), spellings('ping', {})],
  { $id: 'WsClientMessage' },
)
export type ClientMessage = Static<typeof ClientMessage>

/** A client message's name, whichever spelling it came in. */
export const clientMessageName = (m: ClientMessage): 'subscribe' | 'unsubscribe' | 'ping' =>
  'type' in m ? m.type : m.op

export const SnapshotMessage = Type.Object(
  {
    type: Type.Literal('snapshot'),
    channel: Type.String({ description: "'prices' (/ws/strategies has its own snapshot, WsStrategySnapshot)" }),
    updates: Type.Array(PriceUpdate, {
      description: 'the latest update of each asset just subscribed (assets without data yet are left out)',
    }),
  },
  { $id: 'WsSnapshot' },
)
export const SubscribedMessage = Type.Object(
  {
    type: Type.Union([Type.Literal('subscribed'), Type.Literal('unsubscribed')]),
    channel: Type.String(),
    assets: Type.Array(Type.String(), { description: 'what the connection is subscribed to now' }),
  },
  { $id: 'WsSubscribed' },
)
export const HeartbeatMessage = Type.Object(
  { type: Type.Literal('heartbeat'), ts: Type.String({ format: 'date-time' }) },
  { $id: 'WsHeartbeat' },
)
export const PongMessage = Type.Object({ type: Type.Literal('pong') }, { $id: 'WsPong' })
export const ErrorMessage = Type.Object(
  {
    type: Type.Literal('error'),
    code: Type.Union([
      Type.Literal('MALFORMED_MESSAGE'),
      Type.Literal('UNKNOWN_ASSET'),
      Type.Literal('MESSAGE_TOO_LARGE'),
    ]),
    message: Type.String(),
  },
  { $id: 'WsError' },
)

/** Every message schema of the price WebSocket, for the OpenAPI document's components. */
export const WS_MESSAGE_SCHEMAS = [
  PriceInstrument,
  PriceUpdate,
  ClientMessage,
  SnapshotMessage,
  SubscribedMessage,
  HeartbeatMessage,
  PongMessage,
  ErrorMessage,
] as const
