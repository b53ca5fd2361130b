/**
 * JSON-RPC over HTTP as Derive serves it: POST {base}/{public|private}/{method} with the params
 * as the JSON body; the answer is `{ id, result }` or `{ id, error: { code, message, data } }`.
 */
import type { RpcErrorBody } from '../protocol/rpc-codes'
import { ExchangeError, ExchangeUnavailableError, errorFromRpc } from './errors'
import { type ExchangeLogger, silentLogger } from './logger'
import { DEFAULT_RETRY, type RetryPolicy, realSleep, type Sleep, withRetry } from './retry'

export interface HttpTransportOptions {
  baseUrl: string
  timeoutMs?: number
  retry?: RetryPolicy
  logger?: ExchangeLogger
  fetch?: typeof fetch
  sleep?: Sleep
}

export interface CallOptions {
  /** Built per attempt, so a retried private read carries a fresh timestamp. */
  headers?: () => Promise<Record<string, string>>
  /** Only idempotent calls are retried. */
  idempotent: boolean
}

export const DEFAULT_TIMEOUT_MS = 10_000

export class HttpTransport {
  readonly #base: string
  readonly #timeoutMs: number
  readonly #retry: RetryPolicy
  readonly #logger: ExchangeLogger
  readonly #fetch: typeof fetch
  readonly #sleep: Sleep

  constructor(opts: HttpTransportOptions) {
    this.#base = opts.baseUrl.replace(/\/+$/, '')
    this.#timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS
    this.#retry = opts.retry ?? DEFAULT_RETRY
    this.#logger = opts.logger ?? silentLogger
    this.#fetch = opts.fetch ?? fetch
    this.#sleep = opts.sleep ?? realSleep
  }

  /** Calls `method` (e.g. `public/get_ticker`); retries only idempotent calls on retryable failures. */
  async call<T>(method: string, params: object, opts: CallOptions): Promise<T> {
    const policy = opts.idempotent ? this.#retry : { ...this.#retry, attempts: 1 }
    return withRetry(
      (attempt) => this.#once<T>(method, params, opts, attempt),
      policy,
      (err) => err instanceof ExchangeError && err.retryable,
      this.#sleep,
    )
  }

  async #once<T>(method: string, params: object, opts: CallOptions, attempt: number): Promise<T> {
    const started = performance.now()
    const log = (ok: boolean, err?: ExchangeError) => {
      const entry = {
        transport: 'http' as const,
        method,
        attempt,
        ok,
        durationMs: Math.round(performance.now() - started),
        errorCode: err?.code,
        rpcCode: err?.rpcCode,
      }
      if (ok) this.#logger.info(entry, 'exchange call')
      else this.#logger.warn(entry, 'exchange call failed')
    }
    try {
      const result = await this.#post<T>(method, params, opts)
      log(true)
      return result
    } catch (err) {
      const e =
        err instanceof ExchangeError
          ? err
          : new ExchangeUnavailableError({ method, message: `${method}: transport failure`, cause: err })
      log(false, e)
      throw e
    }
  }

  async #post<T>(method: string, params: object, opts: CallOptions): Promise<T> {
    const headers = { 'content-type': 'application/json', ...(opts.headers ? await opts.headers() : {}) }
    const res = await this.#fetch(`${this.#base}/${method}`, {
      method: 'POST',
      headers,
      body: JSON.stringify(params, bigintReplacer),
      signal: AbortSignal.timeout(this.#timeoutMs),
    })
    const text = await res.text()
    let body: { id?: unknown; result?: T; error?: RpcErrorBody } | undefined
    try {
      body = JSON.parse(text)
    } catch {
      body = undefined
    }
    if (body?.error) throw errorFromRpc(method, body.error)
    if (!res.ok || body === undefined || !('result' in body)) {
      throw new ExchangeUnavailableError({ method, message: `${method}: HTTP ${res.status}`, data: res.status })
    }
    return body.result as T
  }
}

/** JSON has no bigint: send it as a decimal string. */
export function bigintReplacer(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value
}
