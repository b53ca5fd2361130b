/**
 * Bearer tokens (spec 2.3, 5.2). @fastify/jwt is registered once at the root; protection is
 * explicit and per controller: `requireAuth(scope)` is the one combined mark that both runs
 * the guard on every route of the scope and declares bearer security on it in OpenAPI.
 */
import fastifyJwt from '@fastify/jwt'
import { TOKEN_TTL } from '@wh/config'
import { UnauthorizedError } from '@wh/core'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'

export interface AuthUser {
  readonly userId: string
}

declare module '@fastify/jwt' {
  interface FastifyJWT {
    payload: { sub: string }
    // set by requireAuth from the verified claim sub (spec 5.2 rule 2)
    user: AuthUser
  }
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

export const BEARER_SECURITY = [{ bearerAuth: [] as string[] }]

/**
 * Registers the JWT signer/verifier: HS256 only, 7 days, payload { sub } and nothing else. A token
 * must carry `exp` and `iat`, and is refused past TOKEN_TTL from `iat` whatever its `exp` says: a
 * token without an end (signed by hand with a leaked secret, or by an old build) is never accepted.
 */
export const jwtPlugin = fp<{ secret: string }>(async (app, opts) => {
  await app.register(fastifyJwt, {
    secret: opts.secret,
    sign: { algorithm: 'HS256', expiresIn: TOKEN_TTL },
    verify: { algorithms: ['HS256'], requiredClaims: ['exp', 'iat'], maxAge: TOKEN_TTL },
  })
})

/** The combined mark (spec 5.2 rule 3): guard + OpenAPI bearer declaration, always together. */
export function requireAuth(scope: FastifyInstance): void {
  scope.addHook('onRoute', (route) => {
    route.schema = {
      ...route.schema,
      security: BEARER_SECURITY,
      response: { ...(route.schema?.response as object), 401: { $ref: 'ErrorBody#' } },
    }
  })
  scope.addHook('onRequest', async (request) => {
    let payload: { sub?: unknown }
    try {
      payload = await request.jwtVerify<{ sub?: unknown }>()
    } catch {
      throw new UnauthorizedError()
    }
    if (typeof payload.sub !== 'string' || !UUID_RE.test(payload.sub)) throw new UnauthorizedError()
    request.user = { userId: payload.sub }
  })
}

/**
 * Verifies a bearer token outside an HTTP request (WS /ws/account reads it from its first message
 * or its subprotocol header): the same checks as the guard. Its user and when it expires (ms), or
 * UNAUTHORIZED.
 */
export function verifyBearerToken(app: FastifyInstance, token: string): AuthUser & { expiresAtMs: number } {
  let payload: { sub?: unknown; exp?: unknown }
  try {
    payload = app.jwt.verify<{ sub?: unknown; exp?: unknown }>(token)
  } catch {
    throw new UnauthorizedError()
  }
  if (typeof payload.sub !== 'string' || !UUID_RE.test(payload.sub) || typeof payload.exp !== 'number')
    throw new UnauthorizedError()
  return { userId: payload.sub, expiresAtMs: payload.exp * 1000 }
}

/** The current user (spec 5.2 rule 6): UNAUTHORIZED when the guard did not run. */
export function currentUser(request: FastifyRequest): AuthUser {
  const user = request.user as AuthUser | undefined
  if (!user || typeof user.userId !== 'string') throw new UnauthorizedError()
  return user
}
