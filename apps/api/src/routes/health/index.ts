/**
 * GET /health: liveness and readiness (docs/architecture.md "Operating it").
 *
 * - Postgres and Redis: without them the API cannot serve → 503, status `down`.
 * - Each chain's RPC and the exchange: the API still serves (the worker's jobs that need them wait
 *   and retry) → 200, status `degraded`.
 * Every probe is bounded (PROBE_TIMEOUT_MS) and its result reused for a few seconds, so a storm of
 * health checks does not become a storm of RPC calls. `?probe=live` and GET /health/live touch
 * nothing and answer 200 at once.
 */

import { HealthQuery, type HealthQueryValue, HealthResponse, LiveResponse } from '@wh/api-schemas/health'
import type { Sql } from '@wh/db'
import type { ChainInfo, ChainName } from '@wh/wallet'
import type { FastifyInstance } from 'fastify'
import type { Redis } from 'ioredis'
import { CachedProbe, type CheckStatus, exchangeTimeProbe, PROBE_TIMEOUT_MS, probe, rpcBlockNumber } from './probes'

/** Postgres and Redis results are reused this long: short, a load balancer acts on them. */
export const CORE_CACHE_MS = 1_000
/** Chain RPC and exchange results are reused this long: they are third parties, often metered. */
export const EXTERNAL_CACHE_MS = 5_000

export interface HealthRoutesOptions {
  sql: Sql
  redis: Redis
  /** the chain registry: one probe per distinct RPC URL, however many chains share it */
  chains: ReadonlyMap<ChainName, ChainInfo>
  /** EXCHANGE_HTTP_URL */
  exchangeHttpUrl: string
  probeTimeoutMs?: number
  coreCacheMs?: number
  externalCacheMs?: number
}

export default async function healthRoutes(app: FastifyInstance, opts: HealthRoutesOptions) {
  const timeoutMs = opts.probeTimeoutMs ?? PROBE_TIMEOUT_MS
  const coreMs = opts.coreCacheMs ?? CORE_CACHE_MS
  const externalMs = opts.externalCacheMs ?? EXTERNAL_CACHE_MS
  const postgres = new CachedProbe(() => probe(() => opts.sql`select 1`, timeoutMs), coreMs)
  const redis = new CachedProbe(() => probe(() => opts.redis.ping(), timeoutMs), coreMs)
  const exchangeCall = exchangeTimeProbe(opts.exchangeHttpUrl, timeoutMs)
  const exchange = new CachedProbe(() => probe(exchangeCall, timeoutMs), externalMs)
  const byUrl = new Map<string, CachedProbe>()
  const chains: Array<[ChainName, CachedProbe]> = []
  for (const [name, info] of opts.chains) {
    let p = byUrl.get(info.rpcUrl)
    if (!p) {
      const url = info.rpcUrl
      p = new CachedProbe(() => probe((signal) => rpcBlockNumber(url, signal), timeoutMs), externalMs)
      byUrl.set(url, p)
    }
    chains.push([name, p])
  }

  const live = { status: 'ok' as const }

  app.get(
    '/health/live',
    {
      schema: {
        tags: ['health'],
        summary: 'Liveness',
        description: 'Answers 200 at once while the process runs; touches no dependency.',
        response: { 200: LiveResponse },
      },
    },
    async () => live,
  )

  app.get<{ Querystring: HealthQueryValue }>(
    '/health',
    {
      schema: {
        tags: ['health'],
        summary: 'Readiness (and liveness with ?probe=live)',
        description:
          '`ok`: every dependency answers. `degraded` (still 200): a chain RPC or the exchange does not ' +
          'answer; the API serves, background work that needs it waits and retries. `down` (503): Postgres ' +
          `or Redis does not answer; the API cannot serve. Each probe is bounded by ${timeoutMs} ms and its ` +
          `result reused for ${coreMs / 1000} s (Postgres, Redis) or ${externalMs / 1000} s (chains, exchange). ` +
          'Chains sharing one RPC URL are probed once. `?probe=live` answers `{ status: "ok" }` without probing.',
        querystring: HealthQuery,
        response: { 200: HealthResponse, 503: HealthResponse },
      },
    },
    async (request, reply) => {
      if (request.query.probe === 'live') return live
      const [pg, rd, ex, ...rpc] = await Promise.all([
        postgres.get(),
        redis.get(),
        exchange.get(),
        ...chains.map(([, p]) => p.get()),
      ])
      const chainChecks: Record<string, CheckStatus> = {}
      chains.forEach(([name], i) => {
        chainChecks[name] = rpc[i] ?? 'down'
      })
      const core = pg === 'up' && rd === 'up'
      const external = ex === 'up' && rpc.every((s) => s === 'up')
      return reply.code(core ? 200 : 503).send({
        status: !core ? 'down' : external ? 'ok' : 'degraded',
        checks: { postgres: pg, redis: rd, exchange: ex, chains: chainChecks },
      })
    },
  )
}
