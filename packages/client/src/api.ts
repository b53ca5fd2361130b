/**
 * Typed calls for every route a frontend uses (spec 4.1, 4.2). Shapes come from the API's own
 * route schemas (./types); an error answer throws ApiError with the API's code. Protected calls
 * send `Authorization: Bearer` with the token `token()` gives (spec 5.2): pass
 * `() => store.read(connectedAddress)` so a token issued for another address is never sent (5.3).
 *
 * Left out on purpose: POST /webhooks/signals (signed with WEBHOOK_SECRET, a server-to-server
 * secret no browser may hold), /metrics and /admin/queues (operators' tools).
 */
import { readJson } from './errors.js'
import type * as T from './types.js'

export interface ApiClientOptions {
  /** e.g. http://127.0.0.1:3000, no trailing slash needed */
  baseUrl: string
  /** the bearer token for protected calls, read on every call; undefined sends none (→ 401) */
  token?: () => string | undefined
  fetch?: typeof fetch
  /** every request is aborted after this long (default 15 s) */
  timeoutMs?: number
}

/** Options of the POST routes that take an Idempotency-Key header. */
export interface IdempotentOptions {
  /** a retried request with the same key is answered with the first one's result */
  idempotencyKey?: string
}

type Query = Record<string, string | number | boolean | undefined>
interface SendOptions {
  query?: Query
  body?: unknown
  auth?: boolean
  headers?: Record<string, string>
}

const DEFAULT_TIMEOUT_MS = 15_000

function queryString(q: Query | undefined): string {
  if (!q) return ''
  const p = new URLSearchParams()
  for (const [k, v] of Object.entries(q)) if (v !== undefined) p.set(k, String(v))
  const s = p.toString()
  return s ? `?${s}` : ''
}

export class ApiClient {
  readonly baseUrl: string
  readonly #token: () => string | undefined
  readonly #fetch: typeof fetch
  readonly #timeoutMs: number

  constructor(opts: ApiClientOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '')
    this.#token = opts.token ?? (() => undefined)
    this.#fetch = opts.fetch ?? ((...a) => fetch(...a))
    this.#timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS
  }

  async #send(method: string, path: string, opts: SendOptions = {}): Promise<Response> {
    const headers: Record<string, string> = { ...opts.headers }
    if (opts.body !== undefined) headers['content-type'] = 'application/json'
    if (opts.auth) {
      const token = this.#token()
      if (token) headers.authorization = `Bearer ${token}`
    }
    return this.#fetch(`${this.baseUrl}${path}${queryString(opts.query)}`, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      signal: AbortSignal.timeout(this.#timeoutMs),
    })
  }

  async #json<R>(method: string, path: string, opts?: SendOptions): Promise<R> {
    return readJson<R>(await this.#send(method, path, opts))
  }

  // ── auth (spec 4.1; signIn() in ./sign-in runs the whole flow) ──
  nonce(): Promise<T.NonceResponse> {
    return this.#json('GET', '/auth/nonce')
  }
  verify(body: T.VerifyBody): Promise<T.VerifyResponse> {
    return this.#json('POST', '/auth/verify', { body })
  }

  // ── public market data ──
  assets(): Promise<T.AssetsResponse> {
    return this.#json('GET', '/assets')
  }
  chart(asset: string, query?: T.ChartQuery): Promise<T.ChartResponse> {
    return this.#json('GET', `/${encodeURIComponent(asset)}/chart`, { query })
  }
  fees(asset: string): Promise<T.FeesResponse> {
    return this.#json('GET', `/${encodeURIComponent(asset)}/fees`)
  }
  strategies(asset: string, query?: T.StrategiesQuery): Promise<T.StrategiesResponse> {
    return this.#json('GET', `/${encodeURIComponent(asset)}/strategies`, { query })
  }
  signalsState(): Promise<T.SignalStateResponse> {
    return this.#json('GET', '/signals/state')
  }
  tradingConfig(): Promise<T.TradingConfigResponse> {
    return this.#json('GET', '/trading-config')
  }
  /** Readiness; a 503 (`down`) is an answer too, so it is returned, not thrown. */
  async health(query?: T.HealthQuery): Promise<T.HealthResponse> {
    const res = await this.#send('GET', '/health', { query })
    if (res.status === 503) return (await res.json()) as T.HealthResponse
    return readJson(res)
  }
  healthLive(): Promise<T.LiveResponse> {
    return this.#json('GET', '/health/live')
  }
  /** The latest published root of the proof of liabilities (404 NO_LIABILITY_ROOT before the first). */
  liabilityRoot(): Promise<T.LiabilityRootBody> {
    return this.#json('GET', '/proof-of-liabilities')
  }
  /** Every published root, newest first. */
  liabilityRoots(query?: T.LiabilityRootsQuery): Promise<T.LiabilityRootsResponse> {
    return this.#json('GET', '/proof-of-liabilities/roots', { query })
  }
  /** The latest complete solvency run's public figures (404 NO_SOLVENCY_RUN before the first). */
  solvency(): Promise<T.PublicSolvencyResponse> {
    return this.#json('GET', '/solvency')
  }

  // ── protected (spec 5.2 rule 4) ──
  depositAddress(): Promise<T.DepositAddressResponse> {
    return this.#json('GET', '/deposit-address', { auth: true })
  }
  /** The caller's deposits, newest first, each with its progress (detected, confirmed, credited, swept). */
  deposits(query?: T.DepositsQuery): Promise<T.DepositsResponse> {
    return this.#json('GET', '/deposits', { auth: true, query })
  }
  portfolioSummary(query?: T.SummaryQuery): Promise<T.SummaryResponse> {
    return this.#json('GET', '/portfolio/summary', { auth: true, query })
  }
  portfolioStatement(query?: T.StatementQuery): Promise<T.StatementResponse> {
    return this.#json('GET', '/portfolio/statement', { auth: true, query: { ...query, format: 'json' } })
  }
  /** The statement as CSV; the next page's cursor comes in the x-next-cursor header. */
  async portfolioStatementCsv(query?: T.StatementQuery): Promise<{ csv: string; nextCursor: string | null }> {
    const res = await this.#send('GET', '/portfolio/statement', { auth: true, query: { ...query, format: 'csv' } })
    if (!res.ok) await readJson(res)
    return { csv: await res.text(), nextCursor: res.headers.get('x-next-cursor') }
  }
  /** The caller's proof of liabilities and the root it leads to; check it with verifyLiabilityProof. */
  portfolioProof(): Promise<T.PortfolioProofResponse> {
    return this.#json('GET', '/portfolio/proof', { auth: true })
  }
  createPosition(body: T.CreatePositionBody, opts: IdempotentOptions = {}): Promise<T.CreatedPosition> {
    return this.#json('POST', '/positions', { auth: true, body, headers: idempotency(opts) })
  }
  /** What a position would sell now, with its fees and net (docs/trading.md "Economics"). */
  quote(body: T.QuoteBody): Promise<T.PositionQuote> {
    return this.#json('POST', '/quotes', { auth: true, body })
  }
  /** A wheel's cycles with their economics, newest first. */
  wheelCycles(id: string, query?: T.WheelCyclesQuery): Promise<T.WheelCyclesResponse> {
    return this.#json('GET', `/wheels/${encodeURIComponent(id)}/cycles`, { auth: true, query })
  }
  positions(query?: T.PositionsQuery): Promise<T.PositionsResponse> {
    return this.#json('GET', '/positions', { auth: true, query })
  }
  cancelPosition(id: string, query?: T.CancelPositionQuery): Promise<T.CancelPositionResponse> {
    return this.#json('DELETE', `/positions/${encodeURIComponent(id)}`, { auth: true, query })
  }
  /** Why a wheel of the caller's chose, waited or skipped each leg, newest first (docs/trading.md "Why: the decision log"). */
  wheelDecisions(wheelId: string, query?: T.WheelDecisionsQuery): Promise<T.WheelDecisionsResponse> {
    return this.#json('GET', `/wheels/${encodeURIComponent(wheelId)}/decisions`, { auth: true, query })
  }
  /** Changes a wheel's settings from its next leg on (docs/trading.md "Wheel settings"). */
  updateWheelSettings(id: string, body: T.WheelSettingsInput): Promise<T.WheelItem> {
    return this.#json('PATCH', `/wheels/${encodeURIComponent(id)}`, { auth: true, body })
  }
  /** Resumes a stopped wheel: the runner opens its next leg from what the subaccount holds. */
  resumeWheel(id: string): Promise<T.WheelItem> {
    return this.#json('POST', `/wheels/${encodeURIComponent(id)}/resume`, { auth: true })
  }
  subaccounts(): Promise<T.SubaccountsResponse> {
    return this.#json('GET', '/subaccounts', { auth: true })
  }
  releaseSubaccount(asset: T.SubaccountAsset, opts: IdempotentOptions = {}): Promise<T.Release> {
    return this.#json('POST', `/subaccounts/${encodeURIComponent(asset)}/release`, {
      auth: true,
      headers: idempotency(opts),
    })
  }
  withdrawalRoutes(): Promise<T.WithdrawalRoutesResponse> {
    return this.#json('GET', '/withdrawals/routes', { auth: true })
  }
  requestWithdrawal(body: T.CreateWithdrawalBody, opts: IdempotentOptions = {}): Promise<T.CreatedWithdrawal> {
    return this.#json('POST', '/withdrawals', { auth: true, body, headers: idempotency(opts) })
  }
  withdrawals(query?: T.WithdrawalsQuery): Promise<T.WithdrawalsResponse> {
    return this.#json('GET', '/withdrawals', { auth: true, query })
  }
}

function idempotency(opts: IdempotentOptions): Record<string, string> {
  return opts.idempotencyKey ? { 'idempotency-key': opts.idempotencyKey } : {}
}
