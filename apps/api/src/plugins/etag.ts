/**
 * Entity tags and conditional GETs (RFC 9110 §8.8.3, §13.1.2) for the public answers that change
 * seldom: the proof of liabilities, the trading configuration, the public solvency figures. A route
 * opts in with `config: { etag: { maxAgeS } }`: its 200 answer gets a strong `ETag` (a hash of the
 * body) and `Cache-Control: public, max-age=N`, and a request whose `If-None-Match` names it gets
 * 304 with no body. The market data's own cache (routes/market/public-cache.ts) tags its answers
 * itself and compares with `etagMatches` too.
 *
 * `If-None-Match` uses the weak comparison: `W/"x"` matches `"x"` (a proxy or a CDN that compressed
 * the body hands the tag back weakened), a list matches when any member does, `*` matches any.
 */
import { createHash } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** tag this route's 200 answers and honour If-None-Match (plugins/etag.ts) */
    etag?: { readonly maxAgeS: number }
  }
}

/** The opaque part of an entity tag, `W/` and the quotes aside; undefined when it is not one. */
function opaqueOf(tag: string): string | undefined {
  const t = tag.trim()
  const strong = t.startsWith('W/') ? t.slice(2) : t
  return strong.length >= 2 && strong.startsWith('"') && strong.endsWith('"') ? strong.slice(1, -1) : undefined
}

/**
 * Whether an `If-None-Match` header names `etag`, by the weak comparison.
 *
 * @example etagMatches('W/"abc", "def"', '"abc"') // true
 */
export function etagMatches(ifNoneMatch: string | string[] | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false
  const want = opaqueOf(etag)
  if (want === undefined) return false
  // a list may hold quoted commas: split only on commas between tags
  for (const header of [ifNoneMatch].flat()) {
    if (header.trim() === '*') return true
    for (const tag of header.match(/(?:W\/)?"[^"]*"/g) ?? []) if (opaqueOf(tag) === want) return true
  }
  return false
}

/** A strong tag of a body: its sha-1, base64url. */
export const etagOf = (body: string | Buffer): string => `"${createHash('sha1').update(body).digest('base64url')}"`

/** The headers a tagged route declares on its 200 and 304 (withEtagHeaders). */
export const ETAG_HEADERS = {
  etag: { type: 'string', description: 'a strong validator of the body: send it back as If-None-Match' },
  'cache-control': { type: 'string', description: 'public, max-age=N: a browser or a CDN may keep the answer N s' },
} as const

/** A response schema with the tag's headers declared (a copy keeping TypeBox's symbol keys). */
export function withEtagHeaders<T extends object>(schema: T): T {
  const copy = Object.defineProperties({}, Object.getOwnPropertyDescriptors(schema)) as T
  return Object.assign(copy, { headers: ETAG_HEADERS })
}

/** What a tagged route declares for a matching If-None-Match. */
export const ETAG_NOT_MODIFIED = withEtagHeaders({
  type: 'null',
  description: 'Not modified: If-None-Match names the current answer (its ETag); no body',
} as const)

const configOf = (request: FastifyRequest) => request.routeOptions.config?.etag

/** The hook that tags the answers of every route with `config.etag` (registered once, at the root). */
export const etagPlugin = fp(
  async (app: FastifyInstance) => {
    app.addHook('onSend', async (request, reply, payload) => {
      const cfg = configOf(request)
      if (!cfg || reply.statusCode !== 200) return payload
      if (request.method !== 'GET' && request.method !== 'HEAD') return payload
      if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload
      const etag = etagOf(payload)
      reply.header('etag', etag)
      reply.header('cache-control', `public, max-age=${cfg.maxAgeS}`)
      if (!etagMatches(request.headers['if-none-match'], etag)) return payload
      reply.code(304)
      return ''
    })
  },
  { name: 'wh-etag' },
)
