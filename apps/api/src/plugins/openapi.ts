/** The machine-readable API description (@fastify/swagger) and its UI at /docs. */
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

/** The API's name and version, in the OpenAPI document and the AsyncAPI one (./asyncapi.ts). */
export const API_INFO = { title: 'Wheelhouse API', version: '0.1.0' } as const

export const openapiPlugin = fp(async (app: FastifyInstance) => {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      // relative: the document is served by the listener it describes, whatever its host
      servers: [{ url: '/', description: 'the API that serves this document' }],
      info: {
        ...API_INFO,
        description:
          'Sign in with an Ethereum wallet (SIWE), get a deposit address, and follow the portfolio. ' +
          'Errors share one shape: { statusCode, code, error, message }.',
      },
      // the WebSockets' messages, operations and close codes (./asyncapi.ts)
      externalDocs: {
        description: 'The WebSockets (/ws/prices, /ws/strategies): AsyncAPI 3.0 document',
        url: '/docs/asyncapi.json',
      },
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          // /metrics: its own scrape credential (METRICS_TOKEN), not an operator's password
          metricsToken: { type: 'http', scheme: 'bearer', description: 'METRICS_TOKEN, the scrape credential' },
        },
      },
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
    // a copy: the document must not share objects with the schemas the routes validate with
    transformObject: (documentObject) =>
      completeDocument(structuredClone((documentObject as { openapiObject: OpenApiDoc }).openapiObject)),
  })
  await app.register(swaggerUi, { routePrefix: '/docs' })
})

type Json = Record<string, unknown>
interface Operation extends Json {
  operationId?: string
  security?: unknown[]
  parameters?: unknown[]
  requestBody?: unknown
  responses?: Record<string, Json>
}
export interface OpenApiDoc extends Json {
  paths?: Record<string, Record<string, Operation>>
}

const ERROR_RESPONSE = (description: string): Json => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } },
})
const REQUEST_ID_HEADER = {
  description: "the request id (the client's when it sent a short one)",
  schema: { type: 'string' },
}
const RETRY_AFTER_HEADER = { description: 'seconds to wait before trying again', schema: { type: 'string' } }

/** `post /positions/{id}` → `postPositionsById`: stable as long as the route is. */
export function operationIdOf(method: string, path: string): string {
  const words = path
    .split('/')
    .filter(Boolean)
    .map((seg) => (seg.startsWith('{') ? `by-${seg.slice(1, -1)}` : seg))
    .join('-')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
  return [method.toLowerCase(), ...words.map((w) => w[0]?.toUpperCase() + w.slice(1))].join('')
}

/**
 * What every operation answers besides its own statuses, declared in the document so tools and
 * generated clients know them: a stable operationId; `security: []` where no token is asked;
 * 400 where it takes input, 413 and 415 where it takes a body, 503 where a dependency can be down
 * (all but the liveness probe), with `retry-after` on 503 and 429, and `x-request-id` on every answer.
 */
export function completeDocument(doc: OpenApiDoc): OpenApiDoc {
  for (const [path, ops] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(ops)) {
      if (typeof op !== 'object' || op === null) continue
      op.operationId ??= operationIdOf(method, path)
      op.security ??= []
      op.responses ??= {}
      const responses = op.responses
      const takesInput = (op.parameters?.length ?? 0) > 0 || op.requestBody !== undefined
      if (takesInput) responses['400'] ??= ERROR_RESPONSE('Bad input: validation failed (VALIDATION_ERROR and others)')
      if (op.requestBody !== undefined) {
        responses['413'] ??= ERROR_RESPONSE('The body is over the limit (PAYLOAD_TOO_LARGE)')
        responses['415'] ??= ERROR_RESPONSE('The body is not application/json (UNSUPPORTED_MEDIA_TYPE)')
      }
      if (path !== '/health/live')
        responses['503'] ??= ERROR_RESPONSE('A dependency is unavailable (SERVICE_UNAVAILABLE and others): retry later')
      for (const [status, response] of Object.entries(responses)) {
        response.headers ??= {}
        const headers = response.headers as Json
        headers['x-request-id'] ??= REQUEST_ID_HEADER
        if (status === '503' || status === '429') headers['retry-after'] ??= RETRY_AFTER_HEADER
      }
    }
  }
  enumsAsEnums(doc)
  namedSchemas(doc)
  return doc
}

const SCHEMA_NAME = /^[A-Z][A-Za-z0-9]+$/

/**
 * Every schema with a `title` (the resources of packages/api-schemas: Position, Withdrawal,
 * Subaccount, StatementLine…) moves to `components.schemas` under that name, and each place it was
 * used refers to it: generated clients get named types. Two different schemas under one name
 * are a programming error, refused when the document is built.
 */
export function namedSchemas(doc: OpenApiDoc): void {
  doc.components ??= {}
  const holder = doc.components as Json & { schemas?: Json }
  holder.schemas ??= {}
  const components = holder.schemas
  const hoist = (node: unknown, root: boolean): unknown => {
    if (Array.isArray(node)) return node.map((item) => hoist(item, false))
    if (typeof node !== 'object' || node === null) return node
    const copy: Json = {}
    for (const [k, v] of Object.entries(node)) copy[k] = hoist(v, false)
    const title = copy.title
    if (root || typeof title !== 'string' || !SCHEMA_NAME.test(title) || !('type' in copy)) return copy
    const existing = components[title]
    if (existing !== undefined && JSON.stringify(existing) !== JSON.stringify(copy))
      throw new Error(`two different schemas are named ${title}`)
    components[title] = copy
    return { $ref: `#/components/schemas/${title}` }
  }
  for (const [name, schema] of Object.entries(components)) components[name] = hoist(schema, true)
  doc.paths = hoist(doc.paths, false) as OpenApiDoc['paths']
}

/** The one string a schema allows, when it is `{ const: 'x' }` or `{ enum: ['x'] }` (TypeBox's Literal). */
function singleString(schema: unknown): string | undefined {
  if (typeof schema !== 'object' || schema === null) return undefined
  const s = schema as Json
  const keys = Object.keys(s).filter((k) => k !== 'type' && k !== 'description')
  if (s.type !== undefined && s.type !== 'string') return undefined
  if (keys.length === 1 && typeof s.const === 'string') return s.const
  if (keys.length === 1 && Array.isArray(s.enum) && s.enum.length === 1 && typeof s.enum[0] === 'string')
    return s.enum[0]
  return undefined
}

/**
 * An `anyOf` of one-value strings (how `Type.Union` of `Type.Literal`s serialises) becomes one
 * `{ type: 'string', enum: [...] }`, the form generators turn into an enumeration; the same
 * values are allowed. Applied in place, everywhere in the document.
 */
export function enumsAsEnums(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) enumsAsEnums(item)
    return
  }
  if (typeof node !== 'object' || node === null) return
  const s = node as Json
  if (Array.isArray(s.anyOf) && s.anyOf.length > 1) {
    const values = s.anyOf.map(singleString)
    if (values.every((v) => v !== undefined)) {
      delete s.anyOf
      s.type = 'string'
      s.enum = values
    }
  }
  for (const value of Object.values(s)) enumsAsEnums(value)
}
