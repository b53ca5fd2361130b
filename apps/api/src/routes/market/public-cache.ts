/**
 * The public market data's cache (docs/market-data.md "Caching"): `/assets`, `/:asset/chart`,
 * `/:asset/fees` and `/:asset/strategies` answer the same to every caller and change only when the
 * feed publishes a price or a strategy event, or as time passes. A route opts in with
 * `config: { publicCache: { maxAgeS } }`; its serialised answer is kept per URL (path and query as
 * sent) until the next event on any of the feed's channels (this process subscribes to them on a
 * connection of its own) or `maxAgeS`, whichever comes first. Every answer carries a strong `ETag`
 * and `Cache-Control: public, max-age`, so a CDN or a browser may keep it too, and a request whose
 * `If-None-Match` names the current answer (weakly compared: `W/"…"` and lists too, plugins/etag.ts)
 * gets 304 with no body. Only 200 answers are kept;
 * `x-cache: hit | miss` says which it was.
 */
import { createHash } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Redis } from 'ioredis'
import { etagMatches } from '../../plugins/etag'

export interface PublicCacheRouteConfig {
  readonly publicCache?: { readonly maxAgeS: number }
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** keep this route's 200 answers (routes/market/public-cache.ts) */
    publicCache?: { readonly maxAgeS: number }
  }
}

export interface PublicCacheOptions {
  /** the API's Redis connection: the cache subscribes on a duplicate of it */
  readonly redis: Redis
  /** the pub/sub channels whose messages make every kept answer stale */
  readonly channels: readonly string[]
  /** answers kept at most (the oldest go first) */
  readonly maxEntries?: number
  /** 0 keeps nothing (ETags are still sent) */
  readonly enabled?: boolean
}

interface Entry {
  readonly body: string
  readonly etag: string
  readonly type: string
  readonly at: number
  readonly generation: number
}

export const PUBLIC_CACHE_MAX_ENTRIES = 2_000

/** The headers every answer of a kept route carries, declared on its 200 and 304 (withCacheHeaders). */
export const CACHE_HEADERS = {
  etag: { type: 'string', description: 'a strong validator of the body: send it back as If-None-Match' },
  'cache-control': { type: 'string', description: 'public, max-age=N: a CDN may keep the answer N seconds' },
  'x-cache': { type: 'string', enum: ['hit', 'miss'], description: 'whether this process answered from its cache' },
} as const

/**
 * A response schema with the cache headers declared (@fastify/swagger reads `headers` on a
 * response): a copy keeping the schema's own keys, TypeBox's symbol keys among them.
 */
export function withCacheHeaders<T extends object>(schema: T): T {
  const copy = Object.defineProperties({}, Object.getOwnPropertyDescriptors(schema)) as T
  return Object.assign(copy, { headers: CACHE_HEADERS })
}

/** The response a kept route declares for a matching If-None-Match. */
export const NOT_MODIFIED = withCacheHeaders({
  type: 'null',
  description: 'Not modified: If-None-Match names the current answer (its ETag); no body',
} as const)

const etagOf = (body: string) => `"${createHash('sha1').update(body).digest('base64url')}"`
const configOf = (request: FastifyRequest) =>
  (request.routeOptions.config as PublicCacheRouteConfig | undefined)?.publicCache

/** What the hooks and the subscription share: the kept answers, the events' generation, whether it hears them. */
interface CacheState {
  readonly entries: Map<string, Entry>
  generation: number
  live: boolean
}

/**
 * Nothing is kept unless this process hears the events: while its subscription is down (Redis
 * away, a reconnection), every request is computed afresh; every event drops what was kept.
 */
function listen(app: FastifyInstance, opts: PublicCacheOptions, st: CacheState): void {
  const subscriber = opts.redis.duplicate({ maxRetriesPerRequest: null, enableOfflineQueue: true })
  const forget = () => {
    st.generation++
    st.entries.clear()
  }
  subscriber.on('error', (err) => app.log.warn({ err: String(err) }, 'public cache subscriber error'))
  subscriber.on('message', forget)
  subscriber.on('close', () => {
    st.live = false
    forget()
  })
  let subscribed = false
  // after a reconnection ioredis subscribes again by itself; events in between may be lost
  subscriber.on('ready', () => {
    forget()
    if (subscribed) st.live = true
  })
  // not awaited: the API starts (and answers uncached) while Redis is away
  subscriber
    .subscribe(...opts.channels)
    .then(() => {
      subscribed = true
      forget()
      st.live = true
    })
    .catch((err: unknown) => app.log.warn({ err: String(err) }, 'public cache: not subscribed, answers not kept'))
  app.addHook('onClose', async () => {
    subscriber.disconnect()
  })
}

function cacheHeaders(reply: FastifyReply, etag: string, maxAgeS: number) {
  reply.header('etag', etag)
  reply.header('cache-control', `public, max-age=${maxAgeS}`)
}

/** Hooks on `app` (the market routes' scope) and the subscription that invalidates; returns the generation reader for tests. */
export async function publicCache(app: FastifyInstance, opts: PublicCacheOptions): Promise<{ generation(): number }> {
  const st: CacheState = { entries: new Map(), generation: 0, live: false }
  const maxEntries = opts.maxEntries ?? PUBLIC_CACHE_MAX_ENTRIES
  const enabled = opts.enabled ?? true
  // the generation a request started under: an answer computed across an event is not kept
  const startedAt = new WeakMap<FastifyRequest, number>()
  const fromCache = new WeakSet<FastifyRequest>()
  if (enabled && opts.channels.length > 0) listen(app, opts, st)

  app.addHook('onRequest', async (request, reply) => {
    const cfg = configOf(request)
    if (!cfg || (request.method !== 'GET' && request.method !== 'HEAD')) return
    startedAt.set(request, st.generation)
    const hit = enabled && st.live ? st.entries.get(request.url) : undefined
    if (!hit || hit.generation !== st.generation || Date.now() - hit.at >= cfg.maxAgeS * 1000) return
    fromCache.add(request)
    cacheHeaders(reply, hit.etag, cfg.maxAgeS)
    reply.header('x-cache', 'hit')
    if (etagMatches(request.headers['if-none-match'], hit.etag)) return reply.code(304).send()
    return reply.code(200).type(hit.type).send(hit.body)
  })

  app.addHook('onSend', async (request, reply, payload) => {
    const cfg = configOf(request)
    if (!cfg || fromCache.has(request) || reply.statusCode !== 200 || typeof payload !== 'string') return payload
    const etag = etagOf(payload)
    cacheHeaders(reply, etag, cfg.maxAgeS)
    reply.header('x-cache', 'miss')
    const gen = startedAt.get(request)
    if (enabled && st.live && gen === st.generation) {
      if (st.entries.size >= maxEntries) st.entries.delete(st.entries.keys().next().value as string)
      st.entries.set(request.url, {
        body: payload,
        etag,
        type: String(reply.getHeader('content-type') ?? 'application/json; charset=utf-8'),
        at: Date.now(),
        generation: gen,
      })
    }
    if (etagMatches(request.headers['if-none-match'], etag)) {
      reply.code(304)
      return ''
    }
    return payload
  })

  return { generation: () => st.generation }
}
