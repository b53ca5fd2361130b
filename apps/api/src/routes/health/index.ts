/** GET /health: liveness plus readiness of Postgres and Redis; 503 when one is down. */
import type { Sql } from '@wh/db'
import type { FastifyInstance } from 'fastify'
import type { Redis } from 'ioredis'
import Type from 'typebox'

const Check = Type.Union([Type.Literal('up'), Type.Literal('down')])
const HealthResponse = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
  checks: Type.Object({ postgres: Check, redis: Check }),
})

const CHECK_TIMEOUT_MS = 1_000

async function probe(fn: () => Promise<unknown>): Promise<'up' | 'down'> {
  let timer: NodeJS.Timeout | undefined
  try {
    await Promise.race([
      fn(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), CHECK_TIMEOUT_MS)
      }),
    ])
    return 'up'
  } catch {
    return 'down'
  } finally {
    clearTimeout(timer)
  }
}

export default async function healthRoutes(app: FastifyInstance, opts: { sql: Sql; redis: Redis }) {
  app.get(
    '/health',
    {
      schema: {
        tags: ['health'],
        summary: 'Liveness and readiness',
        response: { 200: HealthResponse, 503: HealthResponse },
      },
    },
    async (_request, reply) => {
      const [postgres, redis] = await Promise.all([probe(() => opts.sql`select 1`), probe(() => opts.redis.ping())])
      const ok = postgres === 'up' && redis === 'up'
      return reply.code(ok ? 200 : 503).send({ status: ok ? 'ok' : 'degraded', checks: { postgres, redis } })
    },
  )
}
