/**
 * The fixed parts of WS /ws/account's protocol (docs/account-stream.md): how a client presents
 * its token, the close codes, the error messages. The AsyncAPI channel (./channel.ts) lists them
 * from here, so the document and the code cannot drift.
 */

/** The subprotocol that carries the token: `new WebSocket(url, ['wh.bearer', token])`. */
export const BEARER_PROTOCOL = 'wh.bearer'
/** A connection without a valid token after this long is closed (AUTH_TIMEOUT). */
export const AUTH_TIMEOUT_MS = 5_000
/** Client text frames above this get MESSAGE_TOO_LARGE (a token is well under it). */
export const MAX_ACCOUNT_MESSAGE_CHARS = 8 * 1024

/** The application close codes (4000-4999) of /ws/account. */
export const ACCOUNT_CLOSE = {
  queryToken: {
    code: 4400,
    reason: 'query string refused: send the token in the first message or the Sec-WebSocket-Protocol header',
  },
  unauthorized: { code: 4401, reason: 'invalid or expired token' },
  expired: { code: 4401, reason: 'the token expired: connect again with a new one' },
  authTimeout: { code: 4408, reason: 'no valid token in time' },
} as const

/** The `error` messages of /ws/account; the connection stays open after each. */
export const ACCOUNT_ERRORS = {
  binary: { code: 'MALFORMED_MESSAGE', message: 'send JSON text frames' },
  tooLarge: { code: 'MESSAGE_TOO_LARGE', message: `at most ${MAX_ACCOUNT_MESSAGE_CHARS} bytes per message` },
  notJson: { code: 'MALFORMED_MESSAGE', message: 'not JSON' },
  notAMessage: {
    code: 'MALFORMED_MESSAGE',
    message: 'expected {"type":"auth","token":...}, {"type":"subscribe","fromSeq"?:n} or {"type":"ping"}',
  },
  notAuthenticated: { code: 'NOT_AUTHENTICATED', message: 'send {"type":"auth","token":...} first' },
  alreadyAuthenticated: { code: 'MALFORMED_MESSAGE', message: 'already authenticated' },
  alreadySubscribed: { code: 'ALREADY_SUBSCRIBED', message: 'already subscribed: reconnect to start again' },
  failed: { code: 'MALFORMED_MESSAGE', message: 'could not handle the message: subscribe again' },
} as const

export const accountErrorFrame = (e: (typeof ACCOUNT_ERRORS)[keyof typeof ACCOUNT_ERRORS]) =>
  JSON.stringify({ type: 'error', code: e.code, message: e.message })

export const RESNAPSHOT_MESSAGE =
  'the events after fromSeq cannot be replayed: send {"type":"subscribe"} without fromSeq for a snapshot'

/** The token of a `Sec-WebSocket-Protocol` header that offers BEARER_PROTOCOL, else undefined. */
export function tokenOfProtocols(header: string | string[] | undefined): string | undefined {
  const list = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)
  if (!list.includes(BEARER_PROTOCOL)) return undefined
  return list.find((p) => p !== BEARER_PROTOCOL)
}
