/**
 * The operator's desk: a Fastify instance of its own, on its own listener (ADMIN_HOST:ADMIN_PORT,
 * loopback by default, off unless ADMIN_PORT is set), never on the public port. Every route asks
 * for HTTP basic auth (user `admin`, ADMIN_PASSWORD); its OpenAPI document, with that security
 * scheme, is at /docs/json on the same listener. docs/operations.md.
 */
import { randomUUID, timingSafeEqual } from 'node:crypto'
import swagger from '@fastify/swagger'
import { type Clock, redactUrls, systemClock, UnauthorizedError } from '@wh/core'
import type { Database } from '@wh/db'
import type { ChainClients, ChainName } from '@wh/wallet'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { registerErrorHandling, sendError } from '../plugins/errors'
import { BODY_LIMIT_BYTES, LOG_SERIALIZERS, REDACTED_PATHS } from '../server'
import adminRoutes from './routes'

export interface AdminServerDeps {
  password: string
  database: Database
  clients: ReadonlyMap<ChainName, ChainClients>
  clock?: Clock
  logLevel?: string
  logger?: FastifyServerOptions['logger']
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

export async function buildAdminServer(deps: AdminServerDeps): Promise<FastifyInstance> {
  const app = Fastify({
    logger: deps.logger ?? {
      level: deps.logLevel ?? 'info',
      base: { listener: 'admin' },
      redact: [...REDACTED_PATHS],
      serializers: LOG_SERIALIZERS,
      hooks: { streamWrite: redactUrls },
    },
    bodyLimit: BODY_LIMIT_BYTES,
    genReqId: () => randomUUID(),
    frameworkErrors: (err, request, reply) => sendError(request, reply, err),
    ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', allErrors: false } },
  })
  registerErrorHandling(app)
  const expected = `Basic ${Buffer.from(`admin:${deps.password}`).toString('base64')}`
  app.addHook('onRequest', async (request, reply) => {
    if (!safeEqual(request.headers.authorization ?? '', expected)) {
      reply.header('www-authenticate', 'Basic realm="wheelhouse-admin"')
      throw new UnauthorizedError()
    }
  })
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      // relative: the document is served by the listener it describes, whatever its host
      servers: [{ url: '/', description: 'the operator desk that serves this document' }],
      info: {
        title: 'Wheelhouse operator desk',
        version: '0.1.0',
        description:
          'What waits for an operator and the decisions they may take; each decision is recorded with ' +
          'who and why. Served on its own listener only. Errors share one shape: { statusCode, code, error, message }.',
      },
      components: { securitySchemes: { adminBasic: { type: 'http', scheme: 'basic' } } },
      security: [{ adminBasic: [] }],
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
  })
  app.get('/docs/json', { schema: { hide: true } }, async () => app.swagger())
  await app.register(adminRoutes, { sql: deps.database.sql, clock: deps.clock ?? systemClock, clients: deps.clients })
  return app
}
