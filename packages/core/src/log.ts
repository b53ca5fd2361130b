/** What a log line keeps of an error (see serializeError). */
export interface SerializedError {
  [key: string]: unknown
  type: string
  message: string
  stack: string
  code?: string | number
  statusCode?: number
  cause?: SerializedError | string
}

/**
 * What a log line keeps of an error: its class, message, stack, code and status, and its cause
 * chain the same way. Not its other own properties: client libraries and our own code attach
 * options, configuration or dependencies to errors, and pino's standard serializer would print
 * every enumerable one of them, secrets included ("Logs": secrets redacted).
 *
 *   pino({ serializers: { err: serializeError } })
 */
export function serializeError(err: unknown, depth = 0): SerializedError {
  // not an Error: its text, never "[object Object]" (an object's own message, else its JSON)
  if (!(err instanceof Error)) return { type: typeof err, message: redactUrls(textOf(err)), stack: '' }
  const out: SerializedError = {
    type: err.constructor?.name ?? err.name,
    message: redactUrls(err.message),
    stack: redactUrls(err.stack ?? ''),
  }
  const { code, statusCode } = err as { code?: unknown; statusCode?: unknown }
  if (typeof code === 'string' || typeof code === 'number') out.code = code
  if (typeof statusCode === 'number') out.statusCode = statusCode
  // bounded: a cause chain can be long, or a cycle
  if (err.cause !== undefined) out.cause = depth < 5 ? serializeError(err.cause, depth + 1) : '[cause chain truncated]'
  return out
}

function textOf(v: unknown): string {
  if (v !== null && typeof v === 'object') {
    const m = (v as { message?: unknown }).message
    if (typeof m === 'string') return m
    try {
      return JSON.stringify(v)
    } catch {
      return Object.prototype.toString.call(v)
    }
  }
  return String(v)
}

/**
 * A URL in text (an RPC client's error names the URL it called, `URL: https://…/v2/<key>`) keeps
 * its scheme, host and port; its credentials, path and query, where providers put their keys, are
 * replaced. Applied to every log line the API and the worker write (pino's streamWrite hook), to
 * serialized errors, and to error text stored in rows, job failures and alerts.
 */
export function redactUrls(text: string): string {
  if (!text.includes('://')) return text
  return text.replace(URL_IN_TEXT, (_m, scheme: string, userinfo: string | undefined, host: string, rest: string) =>
    userinfo !== undefined || rest.length > 1 ? `${scheme}://${host}/${REDACTED}` : `${scheme}://${host}${rest}`,
  )
}

const REDACTED = '[redacted]'
/** scheme, optional userinfo, host[:port], then anything up to a space, a quote, a bracket or a backslash (JSON escapes) */
const URL_IN_TEXT = /\b([a-z][a-z0-9+.-]*):\/\/(?:([^\s"'<>\\/@]*)@)?([^\s"'<>\\/?#]*)([^\s"'<>\\)\]]*)/gi

/** An error's message for a row, a job's failure or an alert: URLs redacted (redactUrls). */
export function errorMessage(err: unknown): string {
  return redactUrls(err instanceof Error ? err.message : String(err))
}

/** A word that names a credential in a key or a query parameter: its value never reaches a log. */
const SECRET_NAME = '[A-Za-z0-9_.-]*(?:token|signature|authori[sz]ation|password|secret|cookie|jwt)[A-Za-z0-9_.-]*'
const QUICK = /token|signature|authori[sz]ation|password|secret|cookie|jwt|bearer|\/ws\//i
// "key": "value" (JSON, the log line's own shape), the value a string with its escapes, of 8 characters
// or more: a credential is longer, and a currency named in a `token` field ("USDC") stays readable
const SECRET_JSON = new RegExp(String.raw`("${SECRET_NAME}"\s*:\s*)"(?:[^"\\]|\\.){8,}"`, 'gi')
// ?key=value or &key=value anywhere (a URL in a message, a path with its query)
const SECRET_QUERY = new RegExp(String.raw`([?&]${SECRET_NAME}=)[^&\s"'#]*`, 'gi')
// an Authorization header's value quoted in text
const BEARER = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/g
// a WebSocket path keeps no query at all (its token may come there): "/ws/account?…" up to the quote
const WS_QUERY = /(\/ws\/[A-Za-z0-9_/-]*)\?[^"\s]*/g

/**
 * A log line without the values of credentials (docs/architecture.md "Least privilege"): any JSON
 * field or query parameter whose name says token, signature, authorization, password, secret,
 * cookie or jwt keeps its name and loses its value; a Bearer or Basic credential in text loses its
 * value; a /ws/ path loses its query. Lines that name none of these pass untouched (one test).
 */
export function redactSecrets(line: string): string {
  if (!QUICK.test(line)) return line
  return line
    .replace(SECRET_JSON, `$1"${REDACTED}"`)
    .replace(SECRET_QUERY, `$1${REDACTED}`)
    .replace(BEARER, `$1 ${REDACTED}`)
    .replace(WS_QUERY, '$1')
}

/** Every log line the API and the worker write (pino's streamWrite hook): URLs and credentials redacted. */
export function redactLogLine(line: string): string {
  return redactSecrets(redactUrls(line))
}
