/**
 * Who the operator is (docs/operations.md "Operators and roles"), for the desk (admin/server.ts) and
 * Bull Board (bull-board.ts): each operator signs in with their own name and password, or, with
 * ADMIN_AUTH=proxy, an authenticating reverse proxy names them. The role always comes from the
 * operators table (@wh/ops), so a disabled operator is out at once either way.
 *
 * - `password`: POST a name and a password once (the password is checked against its scrypt hash,
 *   throttled by login-throttle.ts); the answer is a session token, in an HttpOnly SameSite=Strict
 *   cookie and in the body (for `Authorization: Bearer` from scripts). Each request then costs one
 *   index probe of the session, never a memory-hard hash: a hash per request would let anyone with a
 *   wrong password keep the desk's cores and memory busy.
 * - `proxy`: the operator's name in the configured header (ADMIN_PROXY_USER_HEADER), believed only
 *   when the request also carries ADMIN_PROXY_SECRET in `x-proxy-secret` (compared in constant
 *   time): without it anyone reaching the listener could name themselves. The name must be an
 *   enabled operator.
 */
import type { ApiConfig } from '@wh/config'
import { AppError, type Clock, safeEqual, systemClock, UnauthorizedError } from '@wh/core'
import type { Sql } from '@wh/db'
import {
  checkOperatorPassword,
  closeSession,
  enabledOperator,
  FORGET_SESSIONS_EVERY_MS,
  forgetEndedSessions,
  hasRole,
  type Operator,
  type OperatorRole,
  openSession,
  sessionOperator,
} from '@wh/ops'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { LoginThrottle } from './login-throttle'

/** The header an authenticating proxy proves itself with (ADMIN_AUTH=proxy). */
export const PROXY_SECRET_HEADER = 'x-proxy-secret'

declare module 'fastify' {
  interface FastifyRequest {
    /** the authenticated operator (operator-auth.ts), set before any handler of the desk or Bull Board runs */
    operator?: Operator
  }
}

/** Signed in, but the role does not allow this (403). */
export class RoleRequiredError extends AppError {
  constructor(needed: OperatorRole) {
    super({ code: 'ROLE_REQUIRED', statusCode: 403, message: `this needs the ${needed} role`, details: { needed } })
  }
}

/** A cookie's value from the Cookie header (no dependency: one name, no attributes to read). */
export function cookieOf(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie
  if (!header) return undefined
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      try {
        return decodeURIComponent(part.slice(eq + 1).trim())
      } catch {
        return undefined // not URI-encoded (`%E0`): no session, a 401 like any unknown token, never a 500
      }
    }
  }
  return undefined
}

export interface OperatorAuthOptions {
  readonly sql: Sql
  readonly auth: ApiConfig['operators']['auth']
  /** the session cookie's name and path (the desk's and Bull Board's are apart) */
  readonly cookie: { readonly name: string; readonly path: string }
  readonly throttle?: LoginThrottle
  /** when ended sessions were last forgotten (once a minute at most) */
  readonly clock?: Clock
}

/** Sign-in, sign-out and the operator of a request, for one listener. */
export class OperatorAuth {
  readonly #o: OperatorAuthOptions
  readonly #throttle: LoginThrottle
  readonly #clock: Clock
  #forgotAtMs = Number.NEGATIVE_INFINITY

  constructor(o: OperatorAuthOptions) {
    this.#o = o
    this.#throttle = o.throttle ?? new LoginThrottle()
    this.#clock = o.clock ?? systemClock
  }

  get mode(): 'password' | 'proxy' {
    return this.#o.auth.kind
  }

  /** The session token a request carries: `Authorization: Bearer`, else the cookie. */
  #token(request: FastifyRequest): string | undefined {
    const h = request.headers.authorization
    if (h?.startsWith('Bearer ')) return h.slice('Bearer '.length).trim()
    return cookieOf(request, this.#o.cookie.name)
  }

  /** The operator of `request`, or undefined (not signed in, the session ended, the proxy not proven). */
  async identify(request: FastifyRequest): Promise<Operator | undefined> {
    const auth = this.#o.auth
    if (auth.kind === 'proxy') {
      const secret = request.headers[PROXY_SECRET_HEADER]
      if (typeof secret !== 'string' || !safeEqual(secret, auth.secret)) return undefined
      const name = request.headers[auth.userHeader]
      return typeof name === 'string' ? enabledOperator(this.#o.sql, name.trim().toLowerCase()) : undefined
    }
    const token = this.#token(request)
    return token ? sessionOperator(this.#o.sql, token) : undefined
  }

  /** Sets request.operator, or throws 401 (403 when signed in with too small a role). */
  async require(request: FastifyRequest, role: OperatorRole): Promise<Operator> {
    const operator = await this.identify(request)
    if (!operator) throw new UnauthorizedError()
    if (!hasRole(operator.role, role)) throw new RoleRequiredError(role)
    request.operator = operator
    return operator
  }

  /**
   * Checks `name` and `password` (throttled per address and per name, the hashing bounded) and opens
   * a session, set as the cookie; 401 for a wrong pair, 429 while throttled.
   */
  async signIn(
    request: FastifyRequest,
    reply: FastifyReply,
    name: string,
    password: string,
  ): Promise<{ operator: Operator; token: string; expiresAt: Date }> {
    if (this.#o.auth.kind === 'proxy')
      throw new AppError({ code: 'SIGN_IN_BY_PROXY', statusCode: 409, message: 'operators sign in through the proxy' })
    const who = name.trim().toLowerCase()
    const operator = await this.#throttle.attempt(request.ip, who, () =>
      checkOperatorPassword(this.#o.sql, who, password),
    )
    if (!operator) throw new AppError({ code: 'SIGN_IN_REJECTED', statusCode: 401, message: 'wrong name or password' })
    const session = await openSession(this.#o.sql, operator.id)
    reply.header('set-cookie', this.#cookie(request, session.token, session.expiresAt))
    await this.#forgetEndedSessions(request)
    return { operator, ...session }
  }

  /** Ended sessions forgotten at most once per FORGET_SESSIONS_EVERY_MS on this listener; a failure is only logged. */
  async #forgetEndedSessions(request: FastifyRequest): Promise<void> {
    const nowMs = this.#clock.now().getTime()
    if (nowMs - this.#forgotAtMs < FORGET_SESSIONS_EVERY_MS) return
    this.#forgotAtMs = nowMs
    await forgetEndedSessions(this.#o.sql).catch((err: unknown) =>
      request.log.warn({ err }, 'ended operator sessions not forgotten'),
    )
  }

  /** Ends the request's session and clears the cookie. */
  async signOut(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const token = this.#token(request)
    if (token) await closeSession(this.#o.sql, token)
    reply.header('set-cookie', this.#cookie(request, '', new Date(0)))
  }

  #cookie(request: FastifyRequest, value: string, expires: Date): string {
    const { name, path } = this.#o.cookie
    // Secure when the request came over TLS (directly or, with TRUST_PROXY, through the proxy)
    const secure = request.protocol === 'https' ? '; Secure' : ''
    return `${name}=${encodeURIComponent(value)}; Path=${path}; Expires=${expires.toUTCString()}; HttpOnly; SameSite=Strict${secure}`
  }
}
