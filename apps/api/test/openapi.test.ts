/**
 * The OpenAPI document says what the API answers (docs/architecture.md "Errors"): stable, unique
 * operationIds; public operations say so; the statuses every route can answer besides its own
 * (400, 413, 415, 503, 429 on sign-in) and the headers (x-request-id, retry-after) are declared, and
 * the API really answers them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Api, newAccount, signIn, startApi } from './support'

type Op = {
  operationId?: string
  security?: unknown[]
  requestBody?: unknown
  parameters?: unknown[]
  responses: Record<string, { headers?: Record<string, unknown> }>
}

describe('the OpenAPI document', () => {
  let api: Api
  let ops: Array<{ method: string; path: string; op: Op }>
  beforeAll(async () => {
    api = await startApi()
    const doc = (await api.app.inject({ method: 'GET', url: '/docs/json' })).json()
    ops = Object.entries(doc.paths as Record<string, Record<string, Op>>).flatMap(([path, byMethod]) =>
      Object.entries(byMethod).map(([method, op]) => ({ method, path, op })),
    )
  })
  afterAll(() => api.close())

  it('gives every operation a unique operationId', () => {
    const ids = ops.map((o) => o.op.operationId)
    expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z0-9]+$/.test(id))).toBe(true)
    expect(new Set(ids).size).toBe(ids.length)
    expect(ops.find((o) => o.path === '/positions/{id}')?.op.operationId).toBe('deletePositionsById')
  })

  it("declares /metrics with its own scrape token answering text/plain, not as a users' bearer-token route", async () => {
    const doc = (await api.app.inject({ method: 'GET', url: '/docs/json' })).json()
    expect(doc.components.securitySchemes.metricsToken).toMatchObject({ type: 'http', scheme: 'bearer' })
    const metrics = ops.find((o) => o.method === 'get' && o.path === '/metrics')?.op as Op & {
      responses: Record<string, { content?: Record<string, unknown> }>
    }
    expect(metrics.security).toEqual([{ metricsToken: [] }])
    expect(Object.keys(metrics.responses['200']?.content ?? {})).toEqual(['text/plain'])
    expect(metrics.responses['401']).toBeDefined()
    const statement = ops.find((o) => o.method === 'get' && o.path === '/portfolio/statement')?.op as Op & {
      responses: Record<string, { content?: Record<string, unknown> }>
    }
    expect(Object.keys(statement.responses['200']?.content ?? {})).toContain('text/csv')
  })

  it('emits every closed set of strings as one enum, never as an anyOf of one-value schemas', async () => {
    const doc = (await api.app.inject({ method: 'GET', url: '/docs/json' })).json()
    const oneValue = (s: Record<string, unknown>) =>
      s.const !== undefined || (Array.isArray(s.enum) && s.enum.length === 1)
    const offenders: string[] = []
    const walk = (node: unknown, at: string): void => {
      if (typeof node !== 'object' || node === null) return
      const anyOf = (node as { anyOf?: Array<Record<string, unknown>> }).anyOf
      if (anyOf && anyOf.length > 1 && anyOf.every(oneValue)) offenders.push(at)
      for (const [k, v] of Object.entries(node)) walk(v, `${at}/${k}`)
    }
    walk(doc, '#')
    expect(offenders).toEqual([])
    // the same values, now as enums: in a component, in a route's own schema, in a request body
    expect(doc.components.schemas.WsError.properties.code).toEqual({
      type: 'string',
      enum: ['MALFORMED_MESSAGE', 'UNKNOWN_ASSET', 'MESSAGE_TOO_LARGE'],
    })
    const cancel = doc.paths['/positions/{id}'].delete.responses['202'].content['application/json'].schema
    expect(cancel.properties.outcome.enum).toEqual([
      'cancelled',
      'cancel_requested',
      'close_requested',
      'stopping',
      'stopped',
    ])
    const signal = doc.paths['/webhooks/signals'].post.requestBody.content['application/json'].schema
    expect(signal.properties.side).toMatchObject({ type: 'string', enum: ['put', 'call', 'both'] })
  })

  it('names the resources as components that every route refers to', async () => {
    const doc = (await api.app.inject({ method: 'GET', url: '/docs/json' })).json()
    const names = Object.keys(doc.components.schemas)
    for (const name of [
      'Position',
      'Wheel',
      'Withdrawal',
      'Subaccount',
      'Release',
      'StatementLine',
      'Asset',
      'Strategy',
    ])
      expect(names).toContain(name)
    const json = (path: string, method: string, status: string) =>
      doc.paths[path][method].responses[status].content['application/json'].schema
    expect(json('/positions', 'get', '200').properties.positions.items).toEqual({
      $ref: '#/components/schemas/Position',
    })
    expect(json('/withdrawals', 'get', '200').properties.items.items).toEqual({
      $ref: '#/components/schemas/Withdrawal',
    })
    expect(json('/portfolio/statement', 'get', '200').properties.rows.items).toEqual({
      $ref: '#/components/schemas/StatementLine',
    })
    // nothing named is left inline
    const inline: string[] = []
    const walk = (node: unknown, at: string): void => {
      if (typeof node !== 'object' || node === null) return
      if (typeof (node as { title?: unknown }).title === 'string') inline.push(at)
      for (const [k, v] of Object.entries(node)) walk(v, `${at}/${k}`)
    }
    walk(doc.paths, '#/paths')
    expect(inline).toEqual([])
  })

  it('declares security on every operation: a bearer token where the guard runs, none elsewhere', () => {
    for (const { method, path, op } of ops) expect(Array.isArray(op.security), `${method} ${path}`).toBe(true)
    const security = (m: string, p: string) => ops.find((o) => o.method === m && o.path === p)?.op.security
    expect(security('get', '/auth/nonce')).toEqual([])
    expect(security('get', '/assets')).toEqual([])
    expect(security('get', '/positions')).toEqual([{ bearerAuth: [] }])
  })

  it('declares 400, 413, 415 and 503 where they can happen, with retry-after and x-request-id', () => {
    for (const { method, path, op } of ops) {
      const where = `${method} ${path}`
      if (op.requestBody !== undefined)
        for (const s of ['400', '413', '415']) expect(op.responses[s], where).toBeDefined()
      if ((op.parameters?.length ?? 0) > 0) expect(op.responses['400'], where).toBeDefined()
      if (path !== '/health/live') expect(op.responses['503']?.headers?.['retry-after'], where).toBeDefined()
      for (const [status, r] of Object.entries(op.responses))
        expect(r.headers?.['x-request-id'], `${where} ${status}`).toBeDefined()
    }
    const nonce = ops.find((o) => o.path === '/auth/nonce')?.op
    expect(nonce?.responses['429']?.headers?.['retry-after']).toBeDefined()
  })

  it('and the API answers them: 413 over the limit, 415 for another content type, both in the one error shape', async () => {
    const token = await signIn(api.app, newAccount())
    const auth = { authorization: `Bearer ${token}` }
    const big = await api.app.inject({
      method: 'POST',
      url: '/withdrawals',
      headers: { ...auth, 'content-type': 'application/json' },
      payload: JSON.stringify({ chain: 'base', asset: 'USDC', amount: '1', destination: 'x'.repeat(70_000) }),
    })
    expect(big.statusCode).toBe(413)
    expect(big.json()).toMatchObject({ statusCode: 413, code: 'PAYLOAD_TOO_LARGE' })
    const text = await api.app.inject({
      method: 'POST',
      url: '/withdrawals',
      headers: { ...auth, 'content-type': 'application/xml' },
      payload: '<withdrawal/>',
    })
    expect(text.statusCode).toBe(415)
    expect(text.json()).toMatchObject({ statusCode: 415, code: 'UNSUPPORTED_MEDIA_TYPE' })
    expect(text.headers['x-request-id']).toBeDefined()
  })
})
