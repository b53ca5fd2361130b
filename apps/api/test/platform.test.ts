import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeOperators } from './desk-support'
import { type Api, newAccount, signIn, startApi } from './support'

describe('errors, health, docs, CORS and Bull Board', () => {
  let api: Api
  beforeAll(async () => {
    api = await startApi({ BULL_BOARD_ENABLED: 'true', BULL_BOARD_READ_ONLY: 'false' })
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

  it('Bull Board: each operator signs in; reading needs a viewer, its writing actions an operator, recorded with who', async () => {
    const pw = await makeOperators(api.ctx.ownerUrl, [
      { name: 'vera', role: 'viewer' },
      { name: 'otto', role: 'operator' },
    ])
    const anon = await api.app.inject({ method: 'GET', url: '/admin/queues/api/queues' })
    expect(anon.statusCode).toBe(401)
    // a person at the board's page is sent to the sign-in form
    const page = await api.app.inject({ method: 'GET', url: '/admin/queues', headers: { accept: 'text/html' } })
    expect([page.statusCode, page.headers.location]).toEqual([303, '/admin/queues/login'])
    const form = await api.app.inject({ method: 'GET', url: '/admin/queues/login' })
    expect(form.body).toContain('<form method="post" action="/admin/queues/login">')
    // the shared password of before opens nothing
    const basic = await api.app.inject({
      method: 'GET',
      url: '/admin/queues/api/queues',
      headers: { authorization: `Basic ${Buffer.from('admin:admin-password-for-tests').toString('base64')}` },
    })
    expect(basic.statusCode).toBe(401)
    const signIn = async (operator: string, password: string) => {
      const res = await api.app.inject({
        method: 'POST',
        url: '/admin/queues/login',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ operator, password }).toString(),
      })
      return { res, cookie: String(res.headers['set-cookie'] ?? '').split(';')[0] as string }
    }
    const wrong = await signIn('vera', 'not-her-password')
    expect(wrong.res.statusCode).toBe(401)
    expect(wrong.res.body).toContain('wrong name or password')
    const vera = await signIn('vera', pw.vera as string)
    expect([vera.res.statusCode, vera.res.headers.location]).toEqual([303, '/admin/queues/'])
    expect(String(vera.res.headers['set-cookie'])).toMatch(/; Path=\/admin\/queues; .*HttpOnly; SameSite=Strict/)
    const res = await api.app.inject({
      method: 'GET',
      url: '/admin/queues/api/queues',
      headers: { cookie: vera.cookie },
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
    const pause = (cookie: string) =>
      api.app.inject({ method: 'PUT', url: '/admin/queues/api/queues/%7Btrading%7D/pause', headers: { cookie } })
    const denied = await pause(vera.cookie)
    expect([denied.statusCode, denied.json().code]).toEqual([403, 'ROLE_REQUIRED'])
    const otto = await signIn('otto', pw.otto as string)
    expect((await pause(otto.cookie)).statusCode).toBe(200)
    const [action] = await api.ctx.database.sql<{ action: string; actor: string; subject: string }[]>`
      select action, actor, subject from operator_actions where action = 'queue_changed'`
    expect(action).toEqual({ action: 'queue_changed', actor: 'otto', subject: '/api/queues/%7Btrading%7D/pause' })
    await api.app.inject({
      method: 'PUT',
      url: '/admin/queues/api/queues/%7Btrading%7D/resume',
      headers: { cookie: otto.cookie },
    })
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
