/**
 * Bull Board at /admin/queues (BULL_BOARD_ENABLED), behind the operators' own sign-in
 * (operator-auth.ts, docs/operations.md "Operators and roles"): reading the queues needs the viewer
 * role, and its writing actions (retry, promote, remove, clean, pause, add) the operator role, each
 * recorded in operator_actions with who. Read-only unless BULL_BOARD_READ_ONLY=false: retrying or
 * removing a job that moves money is best a decision for the desk.
 *
 * With ADMIN_AUTH=password an operator signs in on /admin/queues/login (a plain form; the session is
 * an HttpOnly SameSite=Strict cookie scoped to /admin/queues, so no other site can make the browser
 * act with it); with ADMIN_AUTH=proxy the proxy names them on every request.
 */
import { createBullBoard } from '@bull-board/api'
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter'
import { FastifyAdapter } from '@bull-board/fastify'
import type { ApiConfig } from '@wh/config'
import { AppError, type Clock, UnauthorizedError } from '@wh/core'
import type { Sql } from '@wh/db'
import { recordOperatorAction } from '@wh/ops'
import type { Queue } from 'bullmq'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { sendError, setRetryAfter } from './errors'
import type { LoginThrottle } from './login-throttle'
import { OperatorAuth } from './operator-auth'

export const BULL_BOARD_PATH = '/admin/queues'
const LOGIN_PATH = `${BULL_BOARD_PATH}/login`
const LOGOUT_PATH = `${BULL_BOARD_PATH}/logout`
/** Bull Board's session cookie, scoped to its own path (apart from the desk's). */
export const QUEUES_COOKIE = 'wh_queues'

const READS = new Set(['GET', 'HEAD'])

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string)

function loginPage(message?: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>Wheelhouse queues: sign in</title></head>
<body><h1>Wheelhouse queues</h1>${message ? `<p role="alert">${escapeHtml(message)}</p>` : ''}
<form method="post" action="${LOGIN_PATH}">
<label>Operator <input name="operator" autocomplete="username" required></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required></label>
<button type="submit">Sign in</button></form></body></html>`
}

function parseForm(body: string): Record<string, string> {
  return Object.fromEntries(new URLSearchParams(body))
}

export interface BullBoardOptions {
  queues: Queue[]
  readOnly: boolean
  sql: Sql
  /** ADMIN_AUTH */
  auth: ApiConfig['operators']['auth']
  throttle?: LoginThrottle
  clock?: Clock
}

export async function bullBoardRoutes(app: FastifyInstance, opts: BullBoardOptions) {
  const auth = new OperatorAuth({
    sql: opts.sql,
    auth: opts.auth,
    cookie: { name: QUEUES_COOKIE, path: BULL_BOARD_PATH },
    ...(opts.throttle && { throttle: opts.throttle }),
    ...(opts.clock && { clock: opts.clock }),
  })
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) =>
    done(null, parseForm(String(body))),
  )
  signInRoutes(app, auth)
  app.addHook('onRequest', async (request, reply) => {
    const path = request.url.split('?')[0] as string
    if (path === LOGIN_PATH) return
    try {
      await auth.require(request, READS.has(request.method) || path === LOGOUT_PATH ? 'viewer' : 'operator')
    } catch (e) {
      // a person at the board's page goes to the sign-in form; the board's own calls get the error
      const wantsPage = request.method === 'GET' && String(request.headers.accept ?? '').includes('text/html')
      if (e instanceof UnauthorizedError && wantsPage && auth.mode === 'password')
        return reply.redirect(LOGIN_PATH, 303)
      // answered here, in the API's one error shape: Bull Board's own handler would reshape it
      return sendError(request, reply, e)
    }
  })
  // every change made through the board is on the record, with who
  app.addHook('onResponse', async (request, reply) => {
    if (READS.has(request.method) || reply.statusCode >= 400 || !request.operator) return
    const path = request.url.split('?')[0] as string
    if (path === LOGIN_PATH || path === LOGOUT_PATH) return
    await recordOperatorAction(opts.sql, {
      action: 'queue_changed',
      subject: path.slice(BULL_BOARD_PATH.length).slice(0, 200),
      actor: request.operator.name,
      reason: `${request.method} ${path}`,
      details: { status: reply.statusCode },
    }).catch((err: unknown) => request.log.error({ err }, 'a Bull Board action was not recorded'))
  })
  const serverAdapter = new FastifyAdapter()
  serverAdapter.setBasePath(BULL_BOARD_PATH)
  createBullBoard({
    queues: opts.queues.map((q) => new BullMQAdapter(q, { readOnlyMode: opts.readOnly })),
    serverAdapter,
  })
  await app.register(serverAdapter.registerPlugin(), { prefix: BULL_BOARD_PATH })
}

/** The sign-in form and its post (a form or JSON), and the sign-out. */
function signInRoutes(app: FastifyInstance, auth: OperatorAuth): void {
  app.get(LOGIN_PATH, { schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/html; charset=utf-8').send(loginPage()),
  )
  app.post<{ Body: Record<string, unknown> | undefined }>(
    LOGIN_PATH,
    { schema: { hide: true } },
    async (request: FastifyRequest<{ Body: Record<string, unknown> | undefined }>, reply: FastifyReply) => {
      const isForm = String(request.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')
      const name = typeof request.body?.operator === 'string' ? request.body.operator : ''
      const password = typeof request.body?.password === 'string' ? request.body.password : ''
      try {
        if (!name || !password)
          throw new AppError({ code: 'SIGN_IN_REJECTED', statusCode: 401, message: 'name and password' })
        const s = await auth.signIn(request, reply, name, password)
        if (isForm) return reply.redirect(`${BULL_BOARD_PATH}/`, 303)
        return { operator: { name: s.operator.name, role: s.operator.role }, expiresAt: s.expiresAt.toISOString() }
      } catch (e) {
        // JSON: the API's error shape (sendError, with a throttled sign-in's Retry-After)
        if (!(e instanceof AppError) || !isForm) throw e
        setRetryAfter(reply, e.statusCode, e)
        return reply.code(e.statusCode).type('text/html; charset=utf-8').send(loginPage(e.message))
      }
    },
  )
  app.post(LOGOUT_PATH, { schema: { hide: true } }, async (request, reply) => {
    await auth.signOut(request, reply)
    return reply.redirect(LOGIN_PATH, 303)
  })
}
