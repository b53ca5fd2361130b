import { createHmac, randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { currentUser } from '../src/plugins/auth'
import { type Api, newAccount, signIn, startApi } from './support'

/** Every route behind the combined mark; grows with the controllers of spec 5.2 rule 4. */
const NO_ID = '00000000-0000-4000-8000-000000000000'
const PROTECTED = [
  { method: 'GET', url: '/deposit-address', path: '/deposit-address' },
  { method: 'GET', url: '/deposits', path: '/deposits' },
  { method: 'GET', url: '/portfolio/summary', path: '/portfolio/summary' },
  { method: 'GET', url: '/portfolio/statement', path: '/portfolio/statement' },
  { method: 'GET', url: '/portfolio/proof', path: '/portfolio/proof' },
  { method: 'GET', url: '/withdrawals/routes', path: '/withdrawals/routes' },
  { method: 'POST', url: '/withdrawals', path: '/withdrawals' },
  { method: 'GET', url: '/withdrawals', path: '/withdrawals' },
  { method: 'POST', url: '/positions', path: '/positions' },
  { method: 'GET', url: '/positions', path: '/positions' },
  { method: 'DELETE', url: '/positions/00000000-0000-4000-8000-000000000000', path: '/positions/{id}' },
  { method: 'GET', url: '/subaccounts', path: '/subaccounts' },
  { method: 'POST', url: '/subaccounts/ETH/release', path: '/subaccounts/{asset}/release' },
  { method: 'POST', url: '/quotes', path: '/quotes' },
  { method: 'PATCH', url: `/wheels/${NO_ID}`, path: '/wheels/{id}' },
  { method: 'POST', url: `/wheels/${NO_ID}/resume`, path: '/wheels/{id}/resume' },
  { method: 'GET', url: `/wheels/${NO_ID}/cycles`, path: '/wheels/{id}/cycles' },
  { method: 'GET', url: `/wheels/${NO_ID}/decisions`, path: '/wheels/{id}/decisions' },
] as const

const UNAUTHORIZED = {
  statusCode: 401,
  code: 'UNAUTHORIZED',
  error: 'Unauthorized',
  message: 'A valid bearer token is required',
}

const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url')
function hs256(payload: object, secret: string, header: object = { alg: 'HS256', typ: 'JWT' }): string {
  const head = `${b64(header)}.${b64(payload)}`
  return `${head}.${createHmac('sha256', secret).update(head).digest('base64url')}`
}

describe('bearer guard (spec 5.2, 2.3)', () => {
  let api: Api
  let secret: string
  beforeAll(async () => {
    api = await startApi()
    secret = api.ctx.config.jwtSecret
  })
  afterAll(() => api.close())

  const now = () => Math.floor(Date.now() / 1000)
  const badTokens: Record<string, () => string | undefined> = {
    'no header': () => undefined,
    'alg none': () => `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ sub: randomUUID(), iat: now(), exp: now() + 60 })}.`,
    'wrong key': () =>
      hs256({ sub: randomUUID(), iat: now(), exp: now() + 60 }, 'another-secret-of-at-least-32-characters!!'),
    expired: () => hs256({ sub: randomUUID(), iat: now() - 7200, exp: now() - 3600 }, secret),
    tampered: () => {
      const t = hs256({ sub: randomUUID(), iat: now(), exp: now() + 60 }, secret)
      const [h, , s] = t.split('.')
      return `${h}.${b64({ sub: randomUUID(), iat: now(), exp: now() + 60 })}.${s}`
    },
    'sub not a uuid': () =>
      hs256({ sub: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266', iat: now(), exp: now() + 60 }, secret),
    garbage: () => 'not.a.token',
    // a token without an end is never accepted, nor one older than the 7-day TTL whatever its exp
    'no exp': () => hs256({ sub: randomUUID(), iat: now() }, secret),
    'no iat': () => hs256({ sub: randomUUID(), exp: now() + 60 }, secret),
    'issued 8 days ago, exp in the future': () =>
      hs256({ sub: randomUUID(), iat: now() - 8 * 86_400, exp: now() + 86_400 }, secret),
    'HS512 with the right key': () =>
      (() => {
        const head = `${b64({ alg: 'HS512', typ: 'JWT' })}.${b64({ sub: randomUUID(), iat: now(), exp: now() + 60 })}`
        return `${head}.${createHmac('sha512', secret).update(head).digest('base64url')}`
      })(),
  }

  for (const route of PROTECTED) {
    for (const [name, make] of Object.entries(badTokens)) {
      it(`${route.method} ${route.url}: 401 UNAUTHORIZED with ${name}`, async () => {
        const token = make()
        const res = await api.app.inject({
          method: route.method,
          url: route.url,
          headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
        })
        expect(res.statusCode).toBe(401)
        expect(res.json()).toEqual(UNAUTHORIZED)
      })
    }
    it(`${route.method} ${route.url}: a valid token passes the guard`, async () => {
      const token = await signIn(api.app, newAccount())
      const res = await api.app.inject({
        method: route.method,
        url: route.url,
        headers: { authorization: `Bearer ${token}` },
      })
      expect(res.statusCode).not.toBe(401)
    })
  }

  it('the OpenAPI document declares bearer security on exactly the protected routes', async () => {
    const doc = api.app.swagger() as { paths: Record<string, Record<string, { security?: unknown }>> }
    const secured: string[] = []
    const open: string[] = []
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const key = `${method.toUpperCase()} ${path}`
        if (Array.isArray(op.security) && JSON.stringify(op.security).includes('bearerAuth')) secured.push(key)
        else open.push(key)
      }
    }
    expect(secured.sort()).toEqual(PROTECTED.map((r) => `${r.method} ${r.path}`).sort())
    expect(open).toContain('GET /auth/nonce')
    expect(open).toContain('POST /auth/verify')
    expect(open).toContain('GET /health')
  })

  it('the current-user accessor raises UNAUTHORIZED on a route the guard did not cover', async () => {
    const app = (await import('fastify')).default()
    const { registerErrorHandling } = await import('../src/plugins/errors')
    registerErrorHandling(app)
    app.get('/unguarded', async (request) => currentUser(request))
    const res = await app.inject({ method: 'GET', url: '/unguarded' })
    expect(res.statusCode).toBe(401)
    expect(res.json()).toEqual(UNAUTHORIZED)
    await app.close()
  })
})
