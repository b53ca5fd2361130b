/**
 * Errors that mean "Postgres or Redis cannot be reached right now", not "this request is wrong" or
 * "the code is broken": the error handler answers them 503 SERVICE_UNAVAILABLE (retry shortly)
 * instead of 500. Recognised by what the drivers throw, on the error or its causes:
 *
 * - the socket: ECONNREFUSED, ECONNRESET, ETIMEDOUT, EPIPE, … (both drivers pass them through);
 * - postgres.js: CONNECTION_CLOSED / _ENDED / _DESTROYED, CONNECT_TIMEOUT; and the server's
 *   SQLSTATE class 08 (connection exception), 57P01–57P03 (shutting down, crashed, starting up),
 *   53300 (too many connections);
 * - ioredis: the command refused while disconnected (the API's client has no offline queue),
 *   a connection closed under a command, the retry limit per request, LOADING while Redis replays
 *   its append-only file after a restart.
 */

const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
])
const POSTGRES_JS_CODES = new Set(['CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT'])
const POSTGRES_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300'])
const REDIS_MESSAGES = [/^Stream isn't writeable/, /^Connection is closed\.?$/, /^LOADING /, /^Reached the max retries/]

/** How deep the `cause` chain is followed (a bound on a chain that could loop). */
const MAX_CAUSES = 5

function isUnavailable(e: { name?: unknown; code?: unknown; message?: unknown }): boolean {
  const code = typeof e.code === 'string' ? e.code : undefined
  if (code !== undefined && (SOCKET_CODES.has(code) || POSTGRES_JS_CODES.has(code))) return true
  if (e.name === 'PostgresError' && code !== undefined && (code.startsWith('08') || POSTGRES_SQLSTATES.has(code)))
    return true
  if (e.name === 'MaxRetriesPerRequestError') return true
  return typeof e.message === 'string' && REDIS_MESSAGES.some((re) => re.test(e.message as string))
}

/**
 * @example
 *   isDependencyUnavailable(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })) // true
 */
export function isDependencyUnavailable(err: unknown): boolean {
  let e: unknown = err
  for (let depth = 0; depth <= MAX_CAUSES && typeof e === 'object' && e !== null; depth++) {
    if (isUnavailable(e as Record<string, unknown>)) return true
    e = (e as { cause?: unknown }).cause
  }
  return false
}
