/**
 * /ws/account as a channel of the AsyncAPI document (plugins/asyncapi.ts; docs/account-stream.md):
 * its messages are the TypeBox schemas of @wh/api-schemas/account-ws that the session validates
 * and sends, its errors and close codes the constants of ./protocol.ts.
 */
import {
  AccountAuthenticatedMessage,
  AccountAuthMessage,
  AccountClientMessage,
  AccountErrorMessage,
  AccountEventMessage,
  AccountPingMessage,
  AccountReplayedMessage,
  AccountResnapshotMessage,
  AccountSnapshotMessage,
  AccountSubscribeMessage,
  AMOUNT_UNIT,
} from '@wh/api-schemas/account-ws'
import { HeartbeatMessage, PongMessage } from '@wh/market'
import type { WsChannel, WsMessage } from '../../plugins/asyncapi-document'
import { HEARTBEAT_MS, MAX_CLIENT_FRAME_BYTES } from '../../plugins/websocket'
import { TOPIC_CLOSE_CODES } from '../market/ws-channels'
import {
  ACCOUNT_CLOSE,
  ACCOUNT_ERRORS,
  AUTH_TIMEOUT_MS,
  BEARER_PROTOCOL,
  MAX_ACCOUNT_MESSAGE_CHARS,
  RESNAPSHOT_MESSAGE,
} from './protocol'

const TS = '2026-01-05T09:00:15.000Z'
const USER = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b'
const WITHDRAWAL = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a60'

const eventExamples = [
  {
    name: 'deposit',
    payload: {
      type: 'event',
      unit: AMOUNT_UNIT,
      seq: 1,
      kind: 'deposit.credited',
      at: TS,
      data: {
        depositId: WITHDRAWAL,
        chain: 'base',
        currency: 'USDC',
        amount: '1500000000',
        txHash: `0x${'1f'.repeat(32)}`,
      },
    },
  },
  {
    name: 'withdrawal sent',
    payload: {
      type: 'event',
      unit: AMOUNT_UNIT,
      seq: 7,
      kind: 'withdrawal.sent',
      at: TS,
      data: {
        withdrawalId: WITHDRAWAL,
        state: 'requested',
        chain: 'base',
        currency: 'USDC',
        amount: '50000000',
        txHash: `0x${'ab'.repeat(32)}`,
      },
    },
  },
  {
    name: 'fill',
    payload: {
      type: 'event',
      unit: AMOUNT_UNIT,
      seq: 9,
      kind: 'fill',
      at: TS,
      data: { positionId: WITHDRAWAL, tradeId: 't-1', amountE18: '1000000000000000000', premium: '31200000' },
    },
  },
]

const receives: WsMessage[] = [
  {
    id: 'AccountAuth',
    name: 'auth',
    title: 'Authenticate',
    summary: `The bearer token of POST /auth/verify, as the first message within ${AUTH_TIMEOUT_MS / 1000} s.`,
    description: `Not needed when the token came in the Sec-WebSocket-Protocol header (protocols ["${BEARER_PROTOCOL}", token]). A bad or expired token closes the connection (${ACCOUNT_CLOSE.unauthorized.code}).`,
    payload: AccountAuthMessage,
    examples: [{ name: 'token', payload: { type: 'auth', token: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIuLi4ifQ.c2ln' } }],
  },
  {
    id: 'AccountSubscribe',
    name: 'subscribe',
    title: 'Subscribe',
    summary: 'Once per connection, after authenticating: a snapshot, or the replay of every event after `fromSeq`.',
    payload: AccountSubscribeMessage,
    examples: [
      { name: 'snapshot', payload: { type: 'subscribe' } },
      { name: 'resume', payload: { type: 'subscribe', fromSeq: 41 } },
    ],
  },
  {
    id: 'AccountPing',
    name: 'ping',
    title: 'Ping',
    summary: 'Asks for a `pong` (an application-level ping; protocol pings are answered too).',
    payload: AccountPingMessage,
    examples: [{ name: 'ping', payload: { type: 'ping' } }],
  },
]

const sends: WsMessage[] = [
  {
    id: 'AccountAuthenticated',
    name: 'authenticated',
    title: 'Authenticated',
    summary: 'The token was accepted: the user it names, and the unit of the amounts that follow.',
    description:
      'Amounts on this stream are integer strings in base units (`unit`); `decimals` converts them (1500000000 ' +
      'USDC base units are 1,500 USDC). REST answers decimal strings: docs/account-stream.md "Amounts".',
    payload: AccountAuthenticatedMessage,
    examples: [
      {
        name: 'user',
        payload: { type: 'authenticated', userId: USER, unit: AMOUNT_UNIT, decimals: { USDC: 6, ETH: 18, BTC: 8 } },
      },
    ],
  },
  {
    id: 'AccountSnapshot',
    name: 'snapshot',
    title: 'Account snapshot',
    summary:
      'The answer to a subscribe without `fromSeq`: balances, live legs, wheels, and the last `seq` they include.',
    payload: AccountSnapshotMessage,
    examples: [
      {
        name: 'usdc',
        payload: {
          type: 'snapshot',
          unit: AMOUNT_UNIT,
          decimals: { USDC: 6, ETH: 18, BTC: 8 },
          seq: 41,
          balances: [{ account: 'transit', currency: 'USDC', amount: '950000000' }],
          positions: [],
          wheels: [{ wheelId: WITHDRAWAL, asset: 'ETH', state: 'running', holding: 'cash', cycles: '3' }],
        },
      },
    ],
  },
  {
    id: 'AccountEvent',
    name: 'event',
    title: 'Account event',
    summary: 'One change of the user’s account, `seq` one more than the last one sent.',
    description: 'The kinds and their `data`: docs/account-stream.md "Events".',
    payload: AccountEventMessage,
    examples: eventExamples,
  },
  {
    id: 'AccountReplayed',
    name: 'replayed',
    title: 'Replayed',
    summary: 'After the replay of a subscribe with `fromSeq`: every missed event was sent; live events follow.',
    payload: AccountReplayedMessage,
    examples: [{ name: 'three', payload: { type: 'replayed', fromSeq: 41, seq: 44 } }],
  },
  {
    id: 'AccountResnapshot',
    name: 'resnapshot',
    title: 'Resnapshot',
    summary:
      'The events after `fromSeq` cannot be replayed (too many, too old, or `fromSeq` is past the last event): subscribe again without `fromSeq`.',
    payload: AccountResnapshotMessage,
    examples: [
      {
        name: 'too many',
        payload: { type: 'resnapshot', reason: 'too_many', latestSeq: 5000, message: RESNAPSHOT_MESSAGE },
      },
    ],
  },
  {
    id: 'AccountHeartbeat',
    name: 'heartbeat',
    title: 'Heartbeat',
    summary: `Every ${HEARTBEAT_MS / 1000} s (the default), with a protocol ping frame before it, as on the other streams.`,
    payload: HeartbeatMessage,
    examples: [{ name: 'heartbeat', payload: { type: 'heartbeat', ts: TS } }],
  },
  {
    id: 'AccountPong',
    name: 'pong',
    title: 'Pong',
    summary: 'The answer to a `ping` message.',
    payload: PongMessage,
    examples: [{ name: 'pong', payload: { type: 'pong' } }],
  },
  {
    id: 'AccountError',
    name: 'error',
    title: 'Error',
    summary: 'A client message was refused; the connection stays open.',
    description: `| code | message |\n| --- | --- |\n${Object.values(ACCOUNT_ERRORS)
      .map((e) => `| ${e.code} | \`${e.message}\` |`)
      .join('\n')}`,
    payload: AccountErrorMessage,
    examples: Object.entries(ACCOUNT_ERRORS).map(([name, e]) => ({
      name,
      payload: { type: 'error', code: e.code, message: e.message },
    })),
  },
]

export const ACCOUNT_CHANNEL: WsChannel = {
  id: 'account',
  address: '/ws/account',
  title: 'Account',
  description:
    'The signed-in user’s own events (deposits, withdrawals, legs, orders, fills, settlements, conversions, wheels, ' +
    'subaccount stops), in `seq` order without gaps, resumable after a reconnect (docs/account-stream.md). The token ' +
    `comes in the first message or the Sec-WebSocket-Protocol header, never in the URL. Client messages are JSON ` +
    `text frames of at most ${MAX_ACCOUNT_MESSAGE_CHARS} bytes.`,
  security: [
    {
      name: 'bearerSubprotocol',
      scheme: {
        type: 'httpApiKey',
        name: 'Sec-WebSocket-Protocol',
        in: 'header',
        description: `The protocols "${BEARER_PROTOCOL}" and the token (or an \`auth\` message first).`,
      },
    },
  ],
  receives,
  sends,
  replies: {
    auth: ['authenticated'],
    subscribe: ['snapshot', 'event', 'replayed', 'resnapshot', 'error'],
    ping: ['pong'],
  },
  closeCodes: [
    ACCOUNT_CLOSE.queryToken,
    {
      code: ACCOUNT_CLOSE.unauthorized.code,
      reason: `${ACCOUNT_CLOSE.unauthorized.reason}; or ${ACCOUNT_CLOSE.expired.reason}`,
    },
    ACCOUNT_CLOSE.authTimeout,
    ...TOPIC_CLOSE_CODES.filter((c) => c.code !== 1009),
    {
      code: 1009,
      reason: `a client frame over ${MAX_CLIENT_FRAME_BYTES / 1024} KiB (the socket's maxPayload)`,
    },
  ],
}

/** Unions a client may want whole. */
export const ACCOUNT_WS_SCHEMAS: readonly object[] = [AccountClientMessage]
