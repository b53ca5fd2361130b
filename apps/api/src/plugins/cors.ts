/**
 * CORS (docs/operations.md "The web console"): which browser pages may read which answers.
 *
 * - **Public reads from any origin.** The answers that are the same for everyone and cached (the
 *   market data, the proof of liabilities' roots, the public solvency figures, the trading
 *   configuration) carry `Access-Control-Allow-Origin: *`: any page may show them, as any CDN may
 *   keep them. A route is one when its config has `publicCache` (routes/market/public-cache.ts),
 *   `etag` (plugins/etag.ts) or `publicRead`. No cookie is involved anywhere, so `*` exposes
 *   nothing a plain `curl` would not get.
 * - **Everything else** only from `WEB_ORIGIN`'s origins (the console's), with the methods the
 *   console uses (it cancels positions with DELETE, changes a wheel with PATCH).
 * - **Preflights are cached** by the browser for PREFLIGHT_MAX_AGE_S (`Access-Control-Max-Age`), so
 *   a page does not send an OPTIONS before every DELETE or authorised GET.
 *
 * A preflight is matched to its route by path and the method it asks for, through the route
 * patterns collected as the routes are added (the OPTIONS request itself matches no GET route).
 */
import cors, { type FastifyCorsOptions } from '@fastify/cors'
import type { FastifyInstance, FastifyRequest } from 'fastify'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** the answer is public: readable from any origin (plugins/cors.ts) */
    publicRead?: boolean
  }
}

/** How long a browser may reuse a preflight's answer (Chromium caps it at 2 hours). */
export const PREFLIGHT_MAX_AGE_S = 600

/** The methods a public route answers across origins. */
const PUBLIC_METHODS = ['GET', 'HEAD']

export interface CorsOptions {
  /** WEB_ORIGIN's origins: the console's */
  readonly webOrigins: readonly string[]
  /** the response headers a browser may read */
  readonly exposedHeaders: readonly string[]
}

/** `/:asset/chart` → a RegExp matching `/ETH/chart` (a path parameter is one segment). */
function patternOf(url: string): RegExp {
  const escaped = url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z0-9_]+/g, '[^/]+')
  return new RegExp(`^${escaped}$`)
}

/** Collects the public GET routes as they are added; `isPublic(path)` answers for a request path. */
export function publicRoutes(app: FastifyInstance): { isPublic(path: string): boolean } {
  const patterns: RegExp[] = []
  app.addHook('onRoute', (route) => {
    const c = route.config as { publicCache?: unknown; etag?: unknown; publicRead?: boolean } | undefined
    const methods = [route.method].flat()
    if (!methods.includes('GET') || !(c?.publicCache || c?.etag || c?.publicRead)) return
    patterns.push(patternOf(route.url ?? route.path))
  })
  return { isPublic: (path) => patterns.some((p) => p.test(path)) }
}

/** Registers @fastify/cors with a per-request choice of policy (register before the routes). */
export async function registerCors(app: FastifyInstance, opts: CorsOptions): Promise<void> {
  const routes = publicRoutes(app)
  const common: FastifyCorsOptions = {
    credentials: false,
    maxAge: PREFLIGHT_MAX_AGE_S,
    exposedHeaders: [...opts.exposedHeaders],
  }
  const forPublic: FastifyCorsOptions = { ...common, origin: '*', methods: PUBLIC_METHODS }
  const forConsole: FastifyCorsOptions = {
    ...common,
    origin: [...opts.webOrigins],
    methods: ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'],
  }
  const isPublicRequest = (req: FastifyRequest): boolean => {
    const asked = req.method === 'OPTIONS' ? req.headers['access-control-request-method'] : req.method
    if (typeof asked !== 'string' || !PUBLIC_METHODS.includes(asked.toUpperCase())) return false
    return routes.isPublic(req.url.split('?')[0] ?? '')
  }
  await app.register(cors, {
    delegator: (req: FastifyRequest, cb: (e: Error | null, o?: FastifyCorsOptions) => void) =>
      cb(null, isPublicRequest(req) ? forPublic : forConsole),
  })
}
