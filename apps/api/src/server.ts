/**
 * Builds the Fastify instance: plugins, then one folder per controller of the spec.
 * No listen() here (main.ts does that), so tests and benchmarks build the same server.
 */
import { randomUUID } from 'node:crypto'
import rateLimit from '@fastify/rate-limit'
import type { ApiConfig } from '@wh/config'
import { AppError, type Clock, redactLogLine, serializeError, systemClock } from '@wh/core'
import type { Database } from '@wh/db'
import { BULL_PREFIX } from '@wh/jobs'
import { tradingProfile } from '@wh/trading'
import type { ChainInfo, ChainName, DepositKeyring } from '@wh/wallet'
import type { Queue } from 'bullmq'
import Fastify, { type FastifyInstance, type FastifyRequest, type FastifyServerOptions } from 'fastify'
import type { Redis } from 'ioredis'
import { createJobs, type Jobs, type JobsOptions } from './lib/jobs'
import { asyncapiPlugin } from './plugins/asyncapi'
import { jwtPlugin } from './plugins/auth'
import { BULL_BOARD_PATH, bullBoardRoutes } from './plugins/bull-board'
import { consolePlugin } from './plugins/console'
import { registerCors } from './plugins/cors'
import { registerErrorHandling, sendError } from './plugins/errors'
import { etagPlugin } from './plugins/etag'
import { metricsPlugin } from './plugins/metrics'
import { openapiPlugin } from './plugins/openapi'
import { websocketPlugin } from './plugins/websocket'
import accountWsRoutes from './routes/account-ws/index'
import authRoutes from './routes/auth/index'
import healthRoutes from './routes/health/index'
import liabilitiesRoutes from './routes/liabilities/index'
import { solvencyRoute } from './routes/liabilities/solvency'
import marketRoutes, { type MarketRoutesOptions } from './routes/market/index'
import portfolioRoutes from './routes/portfolio/index'
import positionRoutes from './routes/positions/index'
import { exchangeOptionChain } from './routes/quotes/chain'
import quoteRoutes from './routes/quotes/index'
import signalRoutes from './routes/signals/index'
import subaccountRoutes from './routes/subaccounts/index'
import tradingConfigRoutes from './routes/trading/index'
import treasuryRoutes, { depositsRoute } from './routes/treasury/index'
import wheelDecisionRoutes from './routes/wheel-decisions/index'
import wheelRoutes from './routes/wheels/index'
import wheelCyclesRoutes from './routes/wheels-cycles/index'
import withdrawalRoutes from './routes/withdrawals/index'

export interface ServerDeps {
  /** what the API reads (loadApiConfig); the worker's full Config satisfies it (tests) */
  config: ApiConfig
  database: Database
  redis: Redis
  /** public-only: the API derives addresses, it never signs */
  keyring: DepositKeyring
  chains: ReadonlyMap<ChainName, ChainInfo>
  queues?: Queue[]
  /** the BullMQ key prefix of `queues` (default BULL_PREFIX); the worker's metric hashes live under it too */
  bullPrefix?: string
  /**
   * the jobs every 202 adds on `queues` after its commit (lib/jobs.ts); `disabled` leaves the work to
   * the ticks alone (the benchmark's comparison)
   */
  enqueue?: JobsOptions
  clock?: Clock
  logger?: FastifyServerOptions['logger']
  /** market data: Redis names (tests namespace them), WebSocket heartbeat and slow-client limit */
  marketData?: Pick<
    MarketRoutesOptions,
    'names' | 'fees' | 'strategiesCacheMs' | 'publicCache' | 'publicCacheMaxEntries'
  > & {
    heartbeatMs?: number
    maxBufferedBytes?: number
  }
  /** WS /ws/account: how long a connection may wait before its token (default AUTH_TIMEOUT_MS) */
  accountStream?: { authTimeoutMs?: number }
}

/** Request bodies above this are refused with 413 before any handler runs. */
export const BODY_LIMIT_BYTES = 64 * 1024

/** Headers whose values never reach a log line. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-signature"]',
  'req.headers["x-signal-signature"]',
  // the authenticating proxy's shared secret (ADMIN_AUTH=proxy, plugins/operator-auth.ts)
  'req.headers["x-proxy-secret"]',
  // WS /ws/account's token may come in this header (protocols ['wh.bearer', token])
  'req.headers["sec-websocket-protocol"]',
]

/**
 * An error in a log line keeps its class, message, stack, code and cause, not the options or
 * configuration a library attached to it (pino's standard serializer prints every property).
 */
/** Response headers a browser may read (CORS). */
export const EXPOSED_HEADERS = ['x-next-cursor', 'x-request-id', 'retry-after', 'etag'] as const

/**
 * A bodiless request sent with `content-type: application/json` (a DELETE, a release, as fetch
 * wrappers send them) carries no body rather than failing to parse; a route that needs a body
 * still answers 400 from its schema. Non-empty bodies go through Fastify's own JSON parser.
 */
function acceptEmptyJsonBodies(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8')
    if (text.trim() === '') return done(null, undefined)
    return parse(request, text, done)
  })
}

/** A client's request id: up to 64 letters, digits and `._:-` (a UUID, a trace id). */
export const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,64}$/

/**
 * What a request's log line keeps of its URL: the path, and the query unless the path is a
 * WebSocket's (/ws/*, whose token may come in the query); credential-named parameters elsewhere
 * lose their values in redactLogLine, which every line goes through.
 */
export function loggedUrl(url: string): string {
  return url.startsWith('/ws/') ? (url.split('?')[0] as string) : url
}

export const LOG_SERIALIZERS = {
  err: (err: Error) => serializeError(err),
  req: (req: FastifyRequest) => ({
    method: req.method,
    url: loggedUrl(req.url),
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  }),
}

/**
 * The API's logger: its level, with the redaction of headers, errors, URLs and credentials every
 * line goes through (docs/architecture.md "Least privilege"). Tests write it to a stream of their own.
 */
export function loggerOptions(level: string) {
  return {
    level,
    redact: REDACTED_PATHS,
    serializers: LOG_SERIALIZERS,
    // every line: a URL's path and query (an RPC provider's key), tokens, signatures and
    // authorization values never reach the log
    hooks: { streamWrite: redactLogLine },
  }
}

export async function buildServer(deps: ServerDeps): Promise<FastifyInstance> {
  const clock = deps.clock ?? systemClock
  const app = createApp(deps)
  // the queues Bull Board shows are the ones the routes add their jobs to
  const jobs = createJobs(deps.queues, deps.enqueue)
  await registerPlatform(app, deps, jobs)
  await registerAccountRoutes(app, deps, clock, jobs)
  await registerTradingRoutes(app, deps, clock, jobs)
  await registerStreamsAndMarket(app, deps, clock)
  return app
}

/** The Fastify instance: logging with redaction, body limit, proxies, request ids, the one error shape. */
function createApp(deps: ServerDeps): FastifyInstance {
  const { config } = deps
  const app = Fastify({
    logger: deps.logger ?? loggerOptions(config.logLevel),
    bodyLimit: BODY_LIMIT_BYTES,
    // TRUST_PROXY: request.ip (the sign-in rate limit's key) is the client X-Forwarded-For names
    // only through the proxies trusted here; off, it is the socket's peer and the header is ignored
    trustProxy: typeof config.trustProxy === 'object' ? [...config.trustProxy] : config.trustProxy,
    // a client's x-request-id is kept only when it is a short token (REQUEST_ID_RE), so a caller
    // cannot put arbitrary text or megabytes into every log line of its request; else a fresh UUID
    requestIdHeader: false,
    genReqId: (req) => {
      const id = req.headers['x-request-id']
      return typeof id === 'string' && REQUEST_ID_RE.test(id) ? id : randomUUID()
    },
    // the router's own refusals (a malformed %-escape, a path parameter over its length) would
    // otherwise answer Fastify's shape with an FST_ code: route them into the one error shape
    frameworkErrors: (err, request, reply) => sendError(request, reply, err),
    ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', allErrors: false } },
  })
  // a callback hook: an async one costs a promise on every response
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('x-request-id', request.id)
    done(null, payload)
  })

  return app
}

/** What every route stands on: errors, documents, metrics, CORS, JWT, the sign-in rate limit. */
async function registerPlatform(app: FastifyInstance, deps: ServerDeps, jobs: Jobs): Promise<void> {
  const { config } = deps
  registerErrorHandling(app)
  acceptEmptyJsonBodies(app)
  await app.register(openapiPlugin)
  await app.register(asyncapiPlugin)
  // before the routes: its onResponse hook counts every request by route pattern
  await app.register(metricsPlugin, {
    sql: deps.database.sql,
    redis: deps.redis,
    queues: deps.queues ?? [],
    prefix: deps.bullPrefix ?? BULL_PREFIX,
    token: config.metricsToken,
    allowOpen: config.nodeEnv !== 'production',
    counters: jobs.metrics,
  })
  // the console's origin may call everything (it cancels with DELETE, changes a wheel with PATCH,
  // reads the statement's next page in x-next-cursor and a 503's retry-after); the public, cached
  // answers any origin may read; preflights are cached (plugins/cors.ts)
  await registerCors(app, { webOrigins: config.webOrigins, exposedHeaders: EXPOSED_HEADERS })
  // ETag and 304 on the public answers that change seldom (plugins/etag.ts)
  await app.register(etagPlugin)
  await app.register(jwtPlugin, { secret: config.jwtSecret })
  // Per-IP limits on /auth/* are counted in this process (an LRU of 10k addresses): a Redis
  // counter would add a network round trip to every sign-in. In a cluster (API_PROCESSES > 1,
  // cluster.ts) the processes of one machine count in Redis, so a client meets the limit once, not
  // once per process; if Redis does not answer the request is not limited (skipOnError). Separate
  // replicas each count their own: the limit is abuse control, not accounting.
  await app.register(rateLimit, {
    global: false,
    cache: 10_000,
    ...(config.apiProcesses > 1 && { redis: deps.redis, nameSpace: 'wh:rate-limit:', skipOnError: true }),
    // x-ratelimit-* only once the limit bites (and retry-after then): no cost on the happy path
    addHeadersOnExceeding: { 'x-ratelimit-limit': false, 'x-ratelimit-remaining': false, 'x-ratelimit-reset': false },
    errorResponseBuilder: (_req, ctx) =>
      new AppError({ code: 'RATE_LIMITED', statusCode: 429, message: `Rate limit exceeded, retry in ${ctx.after}` }),
  })
}

/** Health, sign-in, deposit addresses, withdrawals, the portfolio and the proof of liabilities. */
async function registerAccountRoutes(app: FastifyInstance, deps: ServerDeps, clock: Clock, jobs: Jobs): Promise<void> {
  const { config } = deps
  const sql = deps.database.sql
  await app.register(healthRoutes, {
    sql,
    redis: deps.redis,
    chains: deps.chains,
    exchangeHttpUrl: config.exchange.httpUrl,
  })
  await app.register(authRoutes, {
    sql,
    clock,
    siweDomain: config.siweDomain,
    rateLimitPerMinute: config.authRateLimitPerMinute,
    chains: deps.chains,
  })
  await app.register(treasuryRoutes, { sql, keyring: deps.keyring, chains: deps.chains })
  await app.register(depositsRoute, { sql, keyring: deps.keyring, chains: deps.chains })
  await app.register(withdrawalRoutes, {
    sql,
    redis: deps.redis,
    ...(deps.marketData?.names && { names: deps.marketData.names }),
    keyring: deps.keyring,
    chains: deps.chains,
    limits: config.withdrawal,
    clock,
    jobs,
  })
  await app.register(portfolioRoutes, { sql, clock })
  await app.register(liabilitiesRoutes, { sql })
  await app.register(solvencyRoute, { sql, clock })
}

/** Positions, wheels, quotes, subaccounts, signals and the trading configuration (docs/trading.md). */
async function registerTradingRoutes(app: FastifyInstance, deps: ServerDeps, clock: Clock, jobs: Jobs): Promise<void> {
  const { config } = deps
  const sql = deps.database.sql
  // quotes, the fee-share check of POST /positions and the minimum sizes read one option chain (docs/trading.md "Economics")
  const profile = tradingProfile(config.tradingProfile)
  const quoteSettings = {
    profile,
    platformFeeRate: config.platformFeeRate,
    maxFeeShareBps: config.feeShare.maxBps,
    policy: config.feeShare.policy,
  }
  const exchange = { httpUrl: config.exchange.httpUrl }
  const chain = exchangeOptionChain(exchange, profile)
  await app.register(positionRoutes, {
    sql,
    clock,
    profile,
    exchange,
    feeShare: { chain, settings: quoteSettings },
    jobs,
  })
  await app.register(wheelRoutes, { sql, profile, jobs })
  await app.register(quoteRoutes, { chain, settings: quoteSettings, clock })
  await app.register(wheelCyclesRoutes, { sql, clock })
  await app.register(subaccountRoutes, { sql, jobs })
  await app.register(wheelDecisionRoutes, { sql })
  await app.register(signalRoutes, {
    sql,
    secret: config.webhookSecret,
    clock,
    // pause/resume are announced on /ws/strategies
    redis: deps.redis,
    ...(deps.marketData?.names && { names: deps.marketData.names }),
  })
  await app.register(tradingConfigRoutes, {
    profile,
    wheelEnabled: config.wheelEnabled,
    platformFeeRate: config.platformFeeRate,
    minimumSizes: { chain, settings: quoteSettings, clock },
    conversions: {
      preConvertLeadMinutes: config.preConvertLeadMinutes,
      fastTickSeconds: config.conversionFastTickSeconds,
      stuckMinutes: config.conversionStuckMinutes,
    },
  })
}

/** The WebSockets, the public market data, the console and Bull Board. */
async function registerStreamsAndMarket(app: FastifyInstance, deps: ServerDeps, clock: Clock): Promise<void> {
  const { config } = deps
  const sql = deps.database.sql
  await app.register(websocketPlugin, {
    redis: deps.redis,
    ...(deps.marketData?.heartbeatMs !== undefined && { heartbeatMs: deps.marketData.heartbeatMs }),
    ...(deps.marketData?.maxBufferedBytes !== undefined && { maxBufferedBytes: deps.marketData.maxBufferedBytes }),
  })
  await app.register(accountWsRoutes, { sql, clock, ...deps.accountStream })
  await app.register(marketRoutes, {
    sql,
    redis: deps.redis,
    chains: deps.chains,
    platformFeeRate: config.platformFeeRate,
    clock,
    ...(deps.marketData?.names && { names: deps.marketData.names }),
    ...(deps.marketData?.fees && { fees: deps.marketData.fees }),
    profile: tradingProfile(config.tradingProfile),
    ...(deps.marketData?.strategiesCacheMs !== undefined && { strategiesCacheMs: deps.marketData.strategiesCacheMs }),
    ...(deps.marketData?.publicCache !== undefined && { publicCache: deps.marketData.publicCache }),
    ...(deps.marketData?.publicCacheMaxEntries !== undefined && {
      publicCacheMaxEntries: deps.marketData.publicCacheMaxEntries,
    }),
  })

  await app.register(consolePlugin, { dir: config.consoleDir })

  if (config.bullBoard && deps.queues && deps.queues.length > 0) {
    await app.register(bullBoardRoutes, {
      queues: deps.queues,
      readOnly: config.bullBoard.readOnly,
      sql,
      auth: config.operators.auth,
      ...(deps.clock && { clock: deps.clock }),
    })
    app.log.debug(`bull board mounted at ${BULL_BOARD_PATH}`)
  }
}
