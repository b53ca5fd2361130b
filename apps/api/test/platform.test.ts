import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Api, newAccount, signIn, startApi } from './support'

describe('errors, health, docs, CORS and Bull Board', () => {
  let api: Api
  beforeAll(async () => {
    api = await startApi({ ADMIN_PASSWORD: 'admin-password-for-tests' })
  })
  afterAll(() => api.close())

  it('an unknown route answers 404 in the error shape', async () => {
    const res = await api.app.inject({ method: 'GET', url: '/nope?x=1' })
    expect(res.statusCode).toBe(404)
    expect(res.json()).toEqual({
      statusCode: 404,
      code: 'NOT_FOUND',
      error: 'Not Found',
      message: 'Route GET /nope not found',
    })
  })

  it('an oversized body answers 413 in the error shape and writes nothing', async () => {
    const res = await api.app.inject({
      method: 'POST',
      url: '/auth/verify',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ message: 'x'.repeat(100_000), signature: '0x' }),
    })
    // /auth/verify answers every client error as SIWE_REJECTED (spec 7)
    expect(res.statusCode).toBe(401)
    expect(res.json().code).toBe('SIWE_REJECTED')
  })

  it('a wrong content type on a JSON route answers 4xx in the error shape, never 500', async () => {
    const res = await api.app.inject({
      method: 'POST',
      url: '/auth/verify',
      headers: { 'content-type': 'text/plain' },
      payload: 'hello',
    })
    expect(res.statusCode).toBe(401)
    expect(Object.keys(res.json()).sort()).toEqual(['code', 'error', 'message', 'statusCode'])
  })

  it('GET /health reports Postgres and Redis', async () => {
    // nothing serves this suite's chain RPC and exchange URLs: degraded, still 200 (health.test.ts)
    const res = await api.app.inject({ method: 'GET', url: '/health' })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ checks: { postgres: 'up', redis: 'up' } })
  })

  it('serves the OpenAPI document and its UI', async () => {
    const json = await api.app.inject({ method: 'GET', url: '/docs/json' })
    expect(json.statusCode).toBe(200)
    expect(json.json().components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' })
    const ui = await api.app.inject({ method: 'GET', url: '/docs/' })
    expect(ui.statusCode).toBe(200)
  })

  it('allows CORS from WEB_ORIGIN only', async () => {
    const ok = await api.app.inject({ method: 'GET', url: '/health', headers: { origin: 'http://localhost:5173' } })
    expect(ok.headers['access-control-allow-origin']).toBe('http://localhost:5173')
    const other = await api.app.inject({ method: 'GET', url: '/health', headers: { origin: 'https://evil.example' } })
    expect(other.headers['access-control-allow-origin']).toBeUndefined()
  })

  it('lets the console cancel a position (DELETE preflight) and read x-next-cursor, x-request-id and retry-after', async () => {
    const origin = 'http://localhost:5173'
    const preflight = await api.app.inject({
      method: 'OPTIONS',
      url: `/positions/${randomUUID()}`,
      headers: { origin, 'access-control-request-method': 'DELETE', 'access-control-request-headers': 'authorization' },
    })
    expect(preflight.statusCode).toBe(204)
    expect(String(preflight.headers['access-control-allow-methods']).split(/, */)).toContain('DELETE')
    const page = await api.app.inject({ method: 'GET', url: '/health', headers: { origin } })
    const exposed = String(page.headers['access-control-expose-headers']).split(/, */)
    expect(exposed).toEqual(expect.arrayContaining(['x-next-cursor', 'x-request-id', 'retry-after']))
  })

  it('a bodiless DELETE or release sent as application/json is served, not refused for its empty body', async () => {
    const token = await signIn(api.app, newAccount())
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
    const cancel = await api.app.inject({ method: 'DELETE', url: `/positions/${randomUUID()}`, headers })
    expect(cancel.statusCode).toBe(404)
    expect(cancel.json().code).not.toBe('VALIDATION_ERROR')
    const release = await api.app.inject({ method: 'POST', url: '/subaccounts/ETH/release', headers })
    expect(release.statusCode).not.toBe(400)
    expect(release.json()).toHaveProperty('code')
    // a route that needs a body still says so, in the one error shape
    const withdrawal = await api.app.inject({ method: 'POST', url: '/withdrawals', headers })
    expect(withdrawal.statusCode).toBe(400)
    expect(withdrawal.json()).toMatchObject({ statusCode: 400, code: 'VALIDATION_ERROR' })
    // and a malformed body is still a 400
    const broken = await api.app.inject({ method: 'POST', url: '/withdrawals', headers, payload: '{"chain":' })
    expect(broken.statusCode).toBe(400)
  })

  it('Bull Board lists the queues behind the admin credential', async () => {
    const anon = await api.app.inject({ method: 'GET', url: '/admin/queues/api/queues' })
    expect(anon.statusCode).toBe(401)
    const wrong = await api.app.inject({
      method: 'GET',
      url: '/admin/queues/api/queues',
      headers: { authorization: `Basic ${Buffer.from('admin:wrong').toString('base64')}` },
    })
    expect(wrong.statusCode).toBe(401)
    const res = await api.app.inject({
      method: 'GET',
      url: '/admin/queues/api/queues',
      headers: { authorization: `Basic ${Buffer.from('admin:admin-password-for-tests').toString('base64')}` },
    })
    expect(res.statusCode).toBe(200)
    const names = res.json().queues.map((q: { name: string }) => q.name)
    expect(names.sort()).toEqual([
      '{accounting}',
      '{conversions}',
      '{deposits}',
      '{solvency}',
      '{trading}',
      '{treasury}',
      '{withdrawals}',
    ])
    // read-only by default: jobs are shown, not retried or removed from here
    for (const q of res.json().queues as Array<{ readOnlyMode: boolean }>) expect(q.readOnlyMode).toBe(true)
  })

  it('echoes a request id on every answer', async () => {
    const res = await api.app.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': 'abc-123' } })
    expect(res.headers['x-request-id']).toBe('abc-123')
  })

  it("replaces a client's request id that is long or carries other characters with a fresh UUID", async () => {
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
    for (const bad of ['x'.repeat(65), 'a b', 'id\u2028next', '{"level":60}', '<script>']) {
      const res = await api.app.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': bad } })
      expect(res.headers['x-request-id']).toMatch(uuid)
    }
    const kept = 'trace.01:ab-CD_9'.padEnd(64, '0')
    const res = await api.app.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': kept } })
    expect(res.headers['x-request-id']).toBe(kept)
  })
})
