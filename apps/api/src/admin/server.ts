/**
 * The operator's desk: a Fastify instance of its own, on its own listener (ADMIN_HOST:ADMIN_PORT,
 * loopback by default, off unless ADMIN_PORT is set), never on the public port. Every route but the
 * sign-in needs an operator (plugins/operator-auth.ts) with the role the route declares; its OpenAPI
 * document, at /docs/json on the same listener, names each route's role. docs/operations.md.
 */
import { randomUUID } from 'node:crypto'
import swagger from '@fastify/swagger'
import type { ApiConfig } from '@wh/config'
import { type Clock, redactLogLine, systemClock } from '@wh/core'
import type { Database } from '@wh/db'
import type { ChainClients, ChainName } from '@wh/wallet'
import type { Queue } from 'bullmq'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { registerErrorHandling, sendError } from '../plugins/errors'
import type { LoginThrottle } from '../plugins/login-throttle'
import { OperatorAuth } from '../plugins/operator-auth'
import { BODY_LIMIT_BYTES, LOG_SERIALIZERS, REDACTED_PATHS } from '../server'
import { deskDecisionRoutes } from './decisions'
import { deskJobRoutes } from './jobs'
import { deskProposalRoutes } from './proposals'
import './roles'
import adminRoutes from './routes'
import { DESK_COOKIE, deskSessionRoutes } from './session'

export interface AdminServerDeps {
  database: Database
  /** read-only clients: the chain is read before a held transaction is failed or marked sent */
  clients: ReadonlyMap<ChainName, ChainClients>
  /** ADMIN_AUTH and ADMIN_APPROVALS_REQUIRED (loadApiConfig) */
  operators: ApiConfig['operators']
  clock?: Clock
  logLevel?: string
  logger?: FastifyServerOptions['logger']
  /** TRUST_PROXY: whose X-Forwarded-For names the client the sign-in throttle counts */
  trustProxy?: FastifyServerOptions['trustProxy']
  throttle?: LoginThrottle
  /** the queues Bull Board shows: a withdrawal's, position's or deposit's job state is read there */
  queues?: readonly Queue[]
}

export async function buildAdminServer(deps: AdminServerDeps): Promise<FastifyInstance> {
  const app = Fastify({
    logger: deps.logger ?? {
      level: deps.logLevel ?? 'info',
      base: { listener: 'admin' },
      redact: [...REDACTED_PATHS],
      serializers: LOG_SERIALIZERS,
      hooks: { streamWrite: redactLogLine },
    },
    bodyLimit: BODY_LIMIT_BYTES,
    genReqId: () => randomUUID(),
    ...(deps.trustProxy !== undefined && { trustProxy: deps.trustProxy }),
    frameworkErrors: (err, request, reply) => sendError(request, reply, err),
    ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', allErrors: false } },
  })
  registerErrorHandling(app)
  const auth = new OperatorAuth({
    sql: deps.database.sql,
    auth: deps.operators.auth,
    cookie: { name: DESK_COOKIE, path: '/' },
    ...(deps.throttle && { throttle: deps.throttle }),
    ...(deps.clock && { clock: deps.clock }),
  })
  // every route declares its role: one without is a mistake, refused when the desk is built
  app.addHook('onRoute', (route) => {
    if (route.config?.role === undefined && !route.url.startsWith('/docs'))
      throw new Error(`desk route ${route.method} ${route.url} declares no role`)
  })
  app.addHook('onRequest', async (request) => {
    const role = request.routeOptions.config?.role ?? 'viewer'
    if (role !== 'public') await auth.require(request, role)
  })
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      // relative: the document is served by the listener it describes, whatever its host
      servers: [{ url: '/', description: 'the operator desk that serves this document' }],
      info: {
        title: 'Wheelhouse operator desk',
        version: '0.2.0',
        description:
          'What waits for an operator and the decisions they may take; each decision is recorded with the ' +
          'signed-in operator and why. Roles: viewer (reads), operator (also proposes decisions, rechecks, raises ' +
          'the platform stop), approver (also approves what another operator proposed). Each route names its role ' +
          '(`x-role`, and the scope of its security requirement). Decisions that release money take effect once ' +
          'enough other approvers approved them (POST /admin/proposals/{id}/approve). Served on its own listener ' +
          'only. Errors share one shape: { statusCode, code, error, message }.',
      },
      components: {
        securitySchemes: {
          deskSession: {
            type: 'http',
            scheme: 'bearer',
            description:
              'the token POST /admin/session answers (ADMIN_AUTH=password); with ADMIN_AUTH=proxy the ' +
              "proxy's name header and x-proxy-secret instead",
          },
          deskCookie: { type: 'apiKey', in: 'cookie', name: DESK_COOKIE, description: 'the same session, as a cookie' },
        },
      },
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
  })
  app.get('/docs/json', { schema: { hide: true }, config: { role: 'viewer' } }, async () => app.swagger())
  const routeOpts = {
    sql: deps.database.sql,
    clock: deps.clock ?? systemClock,
    clients: deps.clients,
    approvalsRequired: deps.operators.approvalsRequired,
  }
  await app.register(deskSessionRoutes, { auth })
  await app.register(adminRoutes, routeOpts)
  await app.register(deskDecisionRoutes, routeOpts)
  await app.register(deskProposalRoutes, routeOpts)
  await app.register(deskJobRoutes, { sql: deps.database.sql, ...(deps.queues && { queues: deps.queues }) })
  return app
}
