/**
 * The contract check every API test runs under (support.ts installs it): each response the API
 * gives a test is checked against what `/docs/json` publishes for that route: the status must be
 * declared, its content type too, each header a client acts on (API_HEADERS) must be declared on
 * that response, and a JSON body must validate against the declared schema (JSON Schema 2020-12,
 * as OpenAPI 3.1 says). What does not match is collected; `startApi`'s close() fails the file with
 * the list, so a route that answers what its document does not say is a red test.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import type { FastifyInstance } from 'fastify'

interface Doc {
  paths: Record<
    string,
    Record<
      string,
      { responses?: Record<string, { content?: Record<string, unknown>; headers?: Record<string, unknown> }> }
    >
  >
}

/** The headers the API itself sets that a client acts on: each one sent must be declared on that response. */
const API_HEADERS = ['x-request-id', 'x-next-cursor', 'retry-after', 'etag', 'cache-control', 'x-cache']

/** `/positions/:id` (Fastify) → `/positions/{id}` (OpenAPI) */
const docPathOf = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')
const pointer = (...parts: string[]) => parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')

export interface Contract {
  readonly violations: string[]
}

export function installContract(app: FastifyInstance): Contract {
  const violations: string[] = []
  let compiled: { doc: Doc; ajv: Ajv2020; validators: Map<string, ValidateFunction | null> } | undefined
  const ready = () => {
    if (compiled) return compiled
    const doc = app.swagger() as unknown as Doc
    const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true })
    ;(addFormats as unknown as (a: Ajv2020) => void)(ajv)
    ajv.addSchema(doc as object, 'doc')
    compiled = { doc, ajv, validators: new Map() }
    return compiled
  }

  app.addHook('onSend', async (request, reply, payload) => {
    const url = request.routeOptions.url
    // unmatched URLs (404s of the router), documents, WebSocket upgrades and Bull Board are not API operations
    if (!url || url.startsWith('/docs') || url.startsWith('/admin/queues') || url.startsWith('/ws/')) return payload
    const { doc, ajv, validators } = ready()
    const path = docPathOf(url)
    const method = request.method.toLowerCase() === 'head' ? 'get' : request.method.toLowerCase()
    const op = doc.paths[path]?.[method]
    if (!op) return payload // hidden routes (schema.hide)
    const status = String(reply.statusCode)
    const declared = op.responses?.[status] ?? op.responses?.[`${status[0]}XX`] ?? op.responses?.default
    if (!declared) {
      violations.push(`${method.toUpperCase()} ${path} answered ${status}, which its document does not declare`)
      return payload
    }
    for (const name of API_HEADERS)
      if (reply.hasHeader(name) && !Object.keys(declared.headers ?? {}).some((h) => h.toLowerCase() === name))
        violations.push(
          `${method.toUpperCase()} ${path} ${status} sent the header ${name}, which its document does not declare`,
        )
    const type = String(reply.getHeader('content-type') ?? '').split(';')[0] ?? ''
    const empty = payload === undefined || payload === null || payload === ''
    if (!empty && declared.content && !(type in declared.content))
      violations.push(
        `${method.toUpperCase()} ${path} ${status} answered ${type || 'no content type'}, which its document does not declare`,
      )
    if (type !== 'application/json' || typeof payload !== 'string' || payload === '') return payload
    const key = `${path} ${method} ${status}`
    let validate = validators.get(key)
    if (validate === undefined) {
      const hasSchema = declared.content?.['application/json'] !== undefined
      const status_ = op.responses?.[status] ? status : op.responses?.[`${status[0]}XX`] ? `${status[0]}XX` : 'default'
      validate = hasSchema
        ? ajv.compile({
            $ref: `doc#/${pointer('paths', path, method, 'responses', status_, 'content', 'application/json', 'schema')}`,
          })
        : null
      validators.set(key, validate)
    }
    if (validate && !validate(JSON.parse(payload))) {
      const e = validate.errors?.[0]
      violations.push(
        `${method.toUpperCase()} ${path} ${status}: body does not match: ${e?.instancePath} ${e?.message}`,
      )
    }
    return payload
  })
  return { violations }
}

/** `node` with every `#/components/schemas/…` reference replaced by the schema it names (for assertions). */
export function inlineRefs(doc: { components?: { schemas?: Record<string, unknown> } }, node: unknown): unknown {
  if (Array.isArray(node)) return node.map((n) => inlineRefs(doc, n))
  if (typeof node !== 'object' || node === null) return node
  const ref = (node as { $ref?: unknown }).$ref
  if (typeof ref === 'string' && ref.startsWith('#/components/schemas/'))
    return inlineRefs(doc, doc.components?.schemas?.[ref.slice('#/components/schemas/'.length)])
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, inlineRefs(doc, v)]))
}
