/**
 * Signing in to the desk and out again (plugins/operator-auth.ts): POST /admin/session with a name
 * and a password opens a session (throttled), DELETE ends it, GET /admin/me says who is signed in.
 */
import { Me, SessionView, SignInBody } from '@wh/api-schemas/admin'
import type { FastifyInstance } from 'fastify'
import type Type from 'typebox'
import type { OperatorAuth } from '../plugins/operator-auth'
import { deskRoute } from './roles'

/** The desk's session cookie (Path=/ on the desk's own listener). */
export const DESK_COOKIE = 'wh_desk'

const tag = { tags: ['session'] }

export async function deskSessionRoutes(app: FastifyInstance, opts: { auth: OperatorAuth }) {
  app.post<{ Body: Type.Static<typeof SignInBody> }>(
    '/admin/session',
    deskRoute('public', {
      ...tag,
      summary: 'Sign in: a session for the operator (ADMIN_AUTH=password)',
      description:
        'Throttled per operator name and per address: 429 with Retry-After once too many attempts failed. ' +
        'Wrong name or password: 401 SIGN_IN_REJECTED, the same for both.',
      body: SignInBody,
      response: { 200: SessionView, 401: { $ref: 'ErrorBody#' }, 429: { $ref: 'ErrorBody#' } },
    }),
    async (request, reply) => {
      // a throttled sign-in's Retry-After is set with its 429 (plugins/errors.ts, setRetryAfter)
      const s = await opts.auth.signIn(request, reply, request.body.operator, request.body.password)
      return { operator: { name: s.operator.name, role: s.operator.role }, token: s.token, expiresAt: s.expiresAt }
    },
  )

  app.delete(
    '/admin/session',
    deskRoute('viewer', {
      ...tag,
      summary: 'Sign out: the session ends',
      response: { 204: { type: 'null', description: 'signed out' } },
    }),
    async (request, reply) => {
      await opts.auth.signOut(request, reply)
      return reply.code(204).send()
    },
  )

  app.get(
    '/admin/me',
    deskRoute('viewer', { ...tag, summary: 'Who is signed in, with which role', response: { 200: Me } }),
    async (request) => ({
      operator: { name: request.operator?.name ?? '', role: request.operator?.role ?? 'viewer' },
      auth: opts.auth.mode,
    }),
  )
}
