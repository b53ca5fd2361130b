/**
 * The logging hook of the client. It receives the method, timing and outcome of every call,
 * never the params: those carry signatures, and request auth headers are never passed on.
 */
export interface ExchangeCallLog {
  transport: 'http' | 'ws'
  method: string
  durationMs: number
  attempt: number
  ok: boolean
  errorCode?: string | undefined
  rpcCode?: number | undefined
}

export interface ExchangeLogger {
  info(obj: ExchangeCallLog, msg: string): void
  warn(obj: ExchangeCallLog, msg: string): void
}

export const silentLogger: ExchangeLogger = { info: () => {}, warn: () => {} }
