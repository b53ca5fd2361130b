/**
 * Readiness probes: each bounded by a deadline, each result reused for a while and shared by
 * concurrent callers, so a storm of health checks costs one probe per dependency per period.
 */
import { HttpTransport } from '@wh/exchange'

export type CheckStatus = 'up' | 'down'

/** One probe's deadline: past it, the dependency counts as down. */
export const PROBE_TIMEOUT_MS = 1_000

/** Runs `fn` with a deadline; 'down' on any failure or when the deadline passes first. */
export async function probe(fn: (signal: AbortSignal) => Promise<unknown>, timeoutMs = PROBE_TIMEOUT_MS) {
  const abort = new AbortController()
  let timer: NodeJS.Timeout | undefined
  try {
    await Promise.race([
      fn(abort.signal),
      new Promise((_, reject) => {
        timer = setTimeout(() => {
          abort.abort()
          reject(new Error('timeout'))
        }, timeoutMs)
      }),
    ])
    return 'up' as const
  } catch {
    return 'down' as const
  } finally {
    clearTimeout(timer)
  }
}

/**
 * A probe whose result is reused for `ttlMs` (monotonic time, not the business clock) and whose
 * run in flight is shared: N concurrent callers start one probe.
 */
export class CachedProbe {
  readonly #run: () => Promise<CheckStatus>
  readonly #ttlMs: number
  #value: { status: CheckStatus; atMs: number } | undefined
  #inFlight: Promise<CheckStatus> | undefined

  constructor(run: () => Promise<CheckStatus>, ttlMs: number) {
    this.#run = run
    this.#ttlMs = ttlMs
  }

  get(): Promise<CheckStatus> {
    const v = this.#value
    if (v && performance.now() - v.atMs < this.#ttlMs) return Promise.resolve(v.status)
    this.#inFlight ??= this.#run()
      .then((status) => {
        this.#value = { status, atMs: performance.now() }
        return status
      })
      .finally(() => {
        this.#inFlight = undefined
      })
    return this.#inFlight
  }
}

/** `eth_blockNumber` over plain HTTP: one request, no retries (viem's transport would retry). */
export async function rpcBlockNumber(url: string, signal: AbortSignal): Promise<bigint> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }),
    signal,
  })
  if (!res.ok) throw new Error(`HTTP ${res.status}`)
  const body = (await res.json()) as { result?: unknown }
  if (typeof body.result !== 'string' || !/^0x[0-9a-f]+$/i.test(body.result)) throw new Error('no block number')
  return BigInt(body.result)
}

/** The exchange's `public/get_time` (cheap, unauthenticated), one attempt within the deadline. */
export function exchangeTimeProbe(httpUrl: string, timeoutMs = PROBE_TIMEOUT_MS): () => Promise<unknown> {
  const transport = new HttpTransport({
    baseUrl: httpUrl,
    timeoutMs,
    retry: { attempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
  })
  return async () => {
    const t = await transport.call<unknown>('public/get_time', {}, { idempotent: true })
    if (typeof t !== 'number') throw new Error('get_time: not a number')
  }
}
