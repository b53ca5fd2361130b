/**
 * GET /metrics in Prometheus text format (prom-client), and the HTTP request metrics every route
 * feeds. Registered with fastify-plugin so its onResponse hook sees every route of the app.
 *
 * Access: `Authorization: Bearer <METRICS_TOKEN>` when the token is set, a scrape credential of its
 * own (Prometheus' `authorization` setting), not an operator's password: a scraper holds it in a
 * file and sends it every 15 s, which an operator's password must never be; open without one outside
 * production; not mounted in production without one.
 * The output holds counts, durations and timestamps only: no configuration value.
 */
import { AppError, safeEqual, UnauthorizedError } from '@wh/core'
import type { FastifyInstance, onRequestHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import { Counter, collectDefaultMetrics, Histogram, type Metric, Registry } from 'prom-client'
import { inCluster, metricsOfAll, shareMetrics } from '../cluster'
import { type CollectSources, scrapeTimeMetrics } from './metrics-collect'

export const METRICS_PATH = '/metrics'
/** the route label of a request no route matched (404s): never the raw URL, whose values are unbounded */
export const UNMATCHED_ROUTE = '(unmatched)'
/** request latency buckets, seconds */
export const HTTP_DURATION_BUCKETS_S = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
/** label sets whose counter and histogram children are kept at hand (method × route × status) */
const MAX_CACHED_LABEL_SETS = 2_000

export interface MetricsOptions extends CollectSources {
  /** METRICS_TOKEN: when set, /metrics asks for it as a bearer token */
  token: string | undefined
  /** serve /metrics without a token (development and tests); ignored when a token is set */
  allowOpen: boolean
  /** counters other parts of this process keep (the jobs the routes enqueue, lib/jobs.ts) */
  counters?: readonly Metric[]
}

/**
 * The sum over the cluster's processes; a scrape fails (503) rather than answering one process's
 * counters as the whole, which Prometheus would read as a counter reset.
 */
async function allProcesses(): Promise<string> {
  try {
    return await metricsOfAll()
  } catch (cause) {
    throw new AppError({
      code: 'SERVICE_UNAVAILABLE',
      statusCode: 503,
      retryable: true,
      message: 'The metrics of the other API processes could not be read',
      cause,
    })
  }
}

/** Counts every answer by method, route pattern and status, and times it (what each process counts). */
function countRequests(app: FastifyInstance, registers: Registry[]): void {
  const requests = new Counter({
    name: 'wh_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status code',
    labelNames: ['method', 'route', 'status_code'],
    registers,
  })
  const duration = new Histogram({
    name: 'wh_http_request_duration_seconds',
    help: 'HTTP request duration until the answer is sent, by method, route pattern and status code',
    labelNames: ['method', 'route', 'status_code'],
    buckets: HTTP_DURATION_BUCKETS_S,
    registers,
  })
  // the children per label set, so the hot path skips prom-client's label hashing
  const children = new Map<string, { count: { inc(): void }; observe: { observe(v: number): void } }>()
  // a callback hook: an async one costs a promise on every response
  app.addHook('onResponse', (request, reply, done) => {
    const labels = {
      method: request.method,
      route: request.routeOptions.url ?? UNMATCHED_ROUTE,
      status_code: String(reply.statusCode),
    }
    const key = `${labels.method} ${labels.route} ${labels.status_code}`
    let child = children.get(key)
    if (!child) {
      child = { count: requests.labels(labels), observe: duration.labels(labels) }
      if (children.size < MAX_CACHED_LABEL_SETS) children.set(key, child)
    }
    child.count.inc()
    child.observe.observe(reply.elapsedTime / 1000)
    done()
  })
}

const metricsSchema = {
  tags: ['health'],
  summary: 'Prometheus metrics',
  description:
    'Prometheus text format. `Authorization: Bearer <METRICS_TOKEN>` when the token is configured ' +
    '(a scrape credential of its own); open without one outside production. Figures read from Redis and Postgres are ' +
    'refreshed at most every few seconds. See docs/architecture.md "Operating it".',
  // the scrape token, not the users' bearer token (the scheme is declared in plugins/openapi.ts)
  security: [{ metricsToken: [] }],
  response: {
    200: {
      description: 'Prometheus text exposition format',
      content: { 'text/plain': { schema: { type: 'string' } } },
    },
    401: {
      description: 'No or wrong scrape token (a WWW-Authenticate: Bearer challenge)',
      content: { 'application/json': { schema: { $ref: 'ErrorBody#' } } },
    },
  },
}

export const metricsPlugin = fp(
  async (app: FastifyInstance, opts: MetricsOptions) => {
    if (opts.token === undefined && !opts.allowOpen) {
      app.log.warn('GET /metrics is not mounted: set METRICS_TOKEN to serve it in production')
      return
    }
    // what each process counts (HTTP, process figures): summed over the processes in a cluster
    const registry = new Registry()
    collectDefaultMetrics({ register: registry })
    const registers = [registry]
    for (const counter of opts.counters ?? []) registry.registerMetric(counter)
    shareMetrics([registry])
    // what is read from Redis and Postgres: the same for every process, read once per scrape
    const state = new Registry()
    const scrape = scrapeTimeMetrics(state, opts)
    countRequests(app, registers)

    const expected = opts.token === undefined ? undefined : `Bearer ${opts.token}`
    const guard: onRequestHookHandler = async (request, reply) => {
      if (expected !== undefined && !safeEqual(request.headers.authorization ?? '', expected)) {
        reply.header('www-authenticate', 'Bearer realm="metrics"')
        throw new UnauthorizedError()
      }
    }

    app.get(
      METRICS_PATH,
      {
        onRequest: guard,
        schema: metricsSchema,
      },
      async (_request, reply) => {
        await scrape.refresh()
        const processes = inCluster() ? await allProcesses() : await registry.metrics()
        return reply.type(registry.contentType).send(processes + (await state.metrics()))
      },
    )
  },
  { name: 'wh-metrics' },
)
