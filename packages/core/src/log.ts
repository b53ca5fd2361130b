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
