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
 * every enumerable one of them, secrets included (issue 8, "Logs": secrets redacted).
 *
 *   pino({ serializers: { err: serializeError } })
 */
export function serializeError(err: unknown, depth = 0): SerializedError {
  if (!(err instanceof Error)) return { type: typeof err, message: String(err), stack: '' }
  const out: SerializedError = { type: err.constructor?.name ?? err.name, message: err.message, stack: err.stack ?? '' }
  const { code, statusCode } = err as { code?: unknown; statusCode?: unknown }
  if (typeof code === 'string' || typeof code === 'number') out.code = code
  if (typeof statusCode === 'number') out.statusCode = statusCode
  // bounded: a cause chain can be long, or a cycle
  if (err.cause !== undefined) out.cause = depth < 5 ? serializeError(err.cause, depth + 1) : '[cause chain truncated]'
  return out
}
