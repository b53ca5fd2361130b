/**
 * Messages of WS /ws/account (docs/account-stream.md): the signed-in user's own events, resumable
 * by sequence number. The route validates the client's messages with these and sends the server's
 * in these shapes; the AsyncAPI document (apps/api/src/routes/account-ws/channel.ts) publishes them.
 * `pong` and `heartbeat` are the other streams' (@wh/market PongMessage, HeartbeatMessage).
 */
import { ACCOUNT_EVENT_KINDS } from '@wh/trading'
import Type, { type Static } from 'typebox'
import { LiteralUnion } from './literals'

const Seq = (description: string) => Type.Integer({ minimum: 0, description })

export const AccountAuthMessage = Type.Object(
  {
    type: Type.Literal('auth'),
    token: Type.String({ minLength: 1, maxLength: 4096, description: 'the bearer token of POST /auth/verify' }),
  },
  { $id: 'AccountAuth', additionalProperties: false },
)
export const AccountSubscribeMessage = Type.Object(
  {
    type: Type.Literal('subscribe'),
    fromSeq: Type.Optional(Seq('the last `seq` the client saw: replay every event after it instead of a snapshot')),
  },
  { $id: 'AccountSubscribe', additionalProperties: false },
)
export const AccountPingMessage = Type.Object(
  { type: Type.Literal('ping') },
  { $id: 'AccountPing', additionalProperties: false },
)
export const AccountClientMessage = Type.Union([AccountAuthMessage, AccountSubscribeMessage, AccountPingMessage], {
  $id: 'AccountClientMessage',
})
export type AccountClientMessage = Static<typeof AccountClientMessage>

/**
 * The unit of every amount on this stream (docs/account-stream.md "Amounts"): integer strings in
 * the currency's base units, exact as the rows hold them; REST answers decimal strings. The field
 * names the unit on every message that carries amounts, and `decimals` converts them.
 */
export const AMOUNT_UNIT = 'base_units' as const
const Unit = Type.Literal(AMOUNT_UNIT, {
  description:
    'amounts on this stream are integer strings in base units (divide by 10^decimals of their currency); ' +
    '`…E18` fields are fixed-point with 18 places',
})
const Decimals = Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
  description: 'the decimals of each currency: an amount of `n` base units is n / 10^decimals',
})

export const AccountAuthenticatedMessage = Type.Object(
  { type: Type.Literal('authenticated'), userId: Type.String({ format: 'uuid' }), unit: Unit, decimals: Decimals },
  { $id: 'AccountAuthenticated', additionalProperties: false },
)

const Balance = Type.Object(
  {
    account: Type.Union([Type.Literal('transit'), Type.Literal('sub')], {
      description: 'transit: held at the platform; sub: in a subaccount at the exchange',
    }),
    subaccountId: Type.Optional(Type.String()),
    currency: Type.String(),
    amount: Type.String({ pattern: '^-?[0-9]+$', description: 'base units' }),
  },
  { $id: 'AccountBalance', additionalProperties: false },
)

export const AccountSnapshotMessage = Type.Object(
  {
    type: Type.Literal('snapshot'),
    seq: Seq('the last event the snapshot includes; live events follow from seq + 1'),
    unit: Unit,
    decimals: Decimals,
    balances: Type.Array(Balance),
    positions: Type.Array(Type.Record(Type.String(), Type.Unknown()), {
      description: 'live legs (requested, funding, placing, open, closing), oldest first',
    }),
    wheels: Type.Array(Type.Record(Type.String(), Type.Unknown()), { description: 'wheels not stopped' }),
  },
  { $id: 'AccountSnapshot', additionalProperties: false },
)
export type AccountSnapshotMessage = Static<typeof AccountSnapshotMessage>

export const AccountEventMessage = Type.Object(
  {
    type: Type.Literal('event'),
    seq: Type.Integer({ minimum: 1, description: 'per user, +1 per event, no gaps' }),
    kind: LiteralUnion(ACCOUNT_EVENT_KINDS, { description: 'docs/account-stream.md "Events"' }),
    at: Type.String({ format: 'date-time' }),
    unit: Unit,
    data: Type.Record(Type.String(), Type.Unknown(), {
      description: 'ids, states, tx hashes; amounts as base-unit strings with their currency',
    }),
  },
  { $id: 'AccountEvent', additionalProperties: false },
)
export type AccountEventMessage = Static<typeof AccountEventMessage>

export const AccountReplayedMessage = Type.Object(
  {
    type: Type.Literal('replayed'),
    fromSeq: Seq('the `fromSeq` asked for'),
    seq: Seq('the last event replayed (fromSeq when none was missed); live events follow'),
  },
  { $id: 'AccountReplayed', additionalProperties: false },
)

export const AccountResnapshotMessage = Type.Object(
  {
    type: Type.Literal('resnapshot'),
    reason: Type.Union([Type.Literal('too_many'), Type.Literal('too_old'), Type.Literal('ahead')]),
    latestSeq: Seq('the user’s last event'),
    message: Type.String(),
  },
  { $id: 'AccountResnapshot', additionalProperties: false },
)

export const AccountErrorMessage = Type.Object(
  {
    type: Type.Literal('error'),
    code: Type.Union([
      Type.Literal('MALFORMED_MESSAGE'),
      Type.Literal('MESSAGE_TOO_LARGE'),
      Type.Literal('NOT_AUTHENTICATED'),
      Type.Literal('ALREADY_SUBSCRIBED'),
    ]),
    message: Type.String(),
  },
  { $id: 'AccountError', additionalProperties: false },
)
