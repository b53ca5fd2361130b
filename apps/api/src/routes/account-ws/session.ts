/**
 * One /ws/account connection (docs/account-stream.md "Protocol"): the token (subprotocol header at
 * once, else the first message within AUTH_TIMEOUT_MS; never the query string), then one
 * `subscribe`: a snapshot, or the replay after `fromSeq` (or a `resnapshot` when it cannot be
 * replayed), then the live events through the process's AccountStreams. Heartbeats and the
 * slow-reader drop are the hub's (plugins/websocket-hub.ts): the connection is a hub client.
 */
import {
  type AccountClientMessage,
  AccountClientMessage as AccountClientMessageSchema,
  AMOUNT_UNIT,
} from '@wh/api-schemas/account-ws'
import { type Clock, CURRENCY_DECIMALS } from '@wh/core'
import type { Sql } from '@wh/db'
import { accountSnapshot, replayAccountEvents } from '@wh/trading'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import Value from 'typebox/value'
import type { WebSocket } from 'ws'
import { verifyBearerToken } from '../../plugins/auth'
import type { HubClient } from '../../plugins/websocket-hub'
import {
  ACCOUNT_CLOSE,
  ACCOUNT_ERRORS,
  AUTH_TIMEOUT_MS,
  accountErrorFrame,
  MAX_ACCOUNT_MESSAGE_CHARS,
  RESNAPSHOT_MESSAGE,
  tokenOfProtocols,
} from './protocol'
import { type AccountSink, type AccountStreams, eventFrame } from './streams'

export interface SessionDeps {
  readonly sql: Sql
  readonly streams: AccountStreams
  readonly clock: Clock
  readonly authTimeoutMs?: number
}

/** What names the unit of the stream's amounts, on the messages that carry them (docs/account-stream.md "Amounts"). */
const UNITS = { unit: AMOUNT_UNIT, decimals: CURRENCY_DECIMALS }

/** The longest a timer may wait (setTimeout's limit). */
const MAX_TIMER_MS = 2 ** 31 - 1

/** A replay waits while the socket buffers more than this (the hub drops a reader at 256 KiB). */
const REPLAY_BUFFERED_BYTES = 64 * 1024
/** How long a replay waits for a reader to take what is buffered before giving up on it. */
const REPLAY_STALL_MS = 10_000

/** Resolves true once the socket's buffer is back under REPLAY_BUFFERED_BYTES, false if it stays full or closes. */
async function roomFor(client: HubClient): Promise<boolean> {
  const deadline = Date.now() + REPLAY_STALL_MS
  while (client.socket.bufferedAmount > REPLAY_BUFFERED_BYTES) {
    if (client.closed || Date.now() > deadline) return false
    await new Promise((r) => setTimeout(r, 5))
  }
  return !client.closed
}

/**
 * Where a subscription starts: the snapshot, or the events after `fromSeq` then `replayed`; true
 * when the socket joins the live stream (false: a `resnapshot` was sent, or the socket is gone).
 */
async function startFrom(
  deps: SessionDeps,
  client: HubClient,
  s: AccountSink,
  fromSeq: number | undefined,
): Promise<boolean> {
  if (fromSeq === undefined) {
    const snap = await accountSnapshot(deps.sql, s.userId)
    s.lastSeq = snap.seq
    return client.send(JSON.stringify({ type: 'snapshot', ...UNITS, ...snap }))
  }
  const replay = await replayAccountEvents(deps.sql, s.userId, fromSeq, deps.clock.now())
  if ('resnapshot' in replay) {
    const { resnapshot: reason, latestSeq } = replay
    client.send(JSON.stringify({ type: 'resnapshot', reason, latestSeq, message: RESNAPSHOT_MESSAGE }))
    return false
  }
  s.lastSeq = fromSeq
  for (const e of replay.events) {
    // a long replay goes out as the reader takes it: never past the slow-reader limit
    if (client.socket.bufferedAmount > REPLAY_BUFFERED_BYTES && !(await roomFor(client))) return false
    if (!client.send(eventFrame(e))) return false
    s.lastSeq = e.seq
  }
  return client.send(JSON.stringify({ type: 'replayed', fromSeq, seq: s.lastSeq }))
}

/** A client frame as one of the client messages, or the error it gets. */
function parseClientMessage(
  data: Buffer,
  isBinary: boolean,
): AccountClientMessage | { error: (typeof ACCOUNT_ERRORS)[keyof typeof ACCOUNT_ERRORS] } {
  if (isBinary) return { error: ACCOUNT_ERRORS.binary }
  if (data.length > MAX_ACCOUNT_MESSAGE_CHARS) return { error: ACCOUNT_ERRORS.tooLarge }
  let msg: unknown
  try {
    msg = JSON.parse(data.toString('utf8'))
  } catch {
    return { error: ACCOUNT_ERRORS.notJson }
  }
  return Value.Check(AccountClientMessageSchema, msg)
    ? (msg as AccountClientMessage)
    : { error: ACCOUNT_ERRORS.notAMessage }
}

/**
 * Closes the socket when the token expires (a token lives 7 days, well within setTimeout's limit).
 * Wall-clock time, as the token's verification uses.
 */
function closeAtExpiry(expiresAtMs: number, close: () => void): NodeJS.Timeout {
  const left = expiresAtMs - Date.now()
  const timer = setTimeout(close, Math.max(0, Math.min(left, MAX_TIMER_MS)))
  timer.unref()
  return timer
}

export function openAccountSession(
  app: FastifyInstance,
  deps: SessionDeps,
  socket: WebSocket,
  request: FastifyRequest,
) {
  const close = (c: { code: number; reason: string }) => socket.close(c.code, c.reason)
  // the route takes no query string: a token there would sit in access logs and histories
  if (request.url.includes('?')) return close(ACCOUNT_CLOSE.queryToken)

  const client: HubClient = app.fanout.connect(socket)
  let sink: (AccountSink & { subscribed: boolean }) | undefined
  let timer: NodeJS.Timeout | undefined = setTimeout(
    () => close(ACCOUNT_CLOSE.authTimeout),
    deps.authTimeoutMs ?? AUTH_TIMEOUT_MS,
  )
  timer.unref()
  const cleanup = () => {
    clearTimeout(timer)
    client.close()
    if (sink) deps.streams.leave(sink)
  }
  socket.on('close', cleanup)
  socket.on('error', cleanup)

  const authenticate = (token: string): boolean => {
    let user: ReturnType<typeof verifyBearerToken>
    try {
      user = verifyBearerToken(app, token)
    } catch {
      close(ACCOUNT_CLOSE.unauthorized)
      return false
    }
    clearTimeout(timer)
    timer = closeAtExpiry(user.expiresAtMs, () => close(ACCOUNT_CLOSE.expired))
    sink = { userId: user.userId, lastSeq: 0, subscribed: false, send: (text) => client.send(text) }
    client.send(JSON.stringify({ type: 'authenticated', userId: user.userId, ...UNITS }))
    return true
  }

  const onMessage = async (data: Buffer, isBinary: boolean) => {
    const m = parseClientMessage(data, isBinary)
    if ('error' in m) return client.send(accountErrorFrame(m.error))
    if (m.type === 'ping') return client.send('{"type":"pong"}')
    if (m.type === 'auth') {
      if (sink) return client.send(accountErrorFrame(ACCOUNT_ERRORS.alreadyAuthenticated))
      return authenticate(m.token)
    }
    if (!sink) return client.send(accountErrorFrame(ACCOUNT_ERRORS.notAuthenticated))
    if (sink.subscribed) return client.send(accountErrorFrame(ACCOUNT_ERRORS.alreadySubscribed))
    sink.subscribed = true
    const s = sink
    return deps.streams.subscribe(s, () =>
      startFrom(deps, client, s, m.fromSeq).then((live) => {
        s.subscribed = live
        return live
      }),
    )
  }

  socket.on('message', (data: Buffer, isBinary: boolean) => {
    onMessage(data, isBinary).catch((err) => {
      request.log.warn({ err: String(err) }, 'ws/account message failed')
      if (sink) sink.subscribed = false
      client.send(accountErrorFrame(ACCOUNT_ERRORS.failed))
    })
  })

  const offered = tokenOfProtocols(request.headers['sec-websocket-protocol'])
  if (offered !== undefined) authenticate(offered)
}
