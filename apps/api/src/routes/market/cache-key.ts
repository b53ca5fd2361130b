/**
 * What the public cache keeps an answer under (public-cache.ts, docs/market-data.md "Caching"): the
 * canonical request, never the URL as sent, so nobody can flush the cache by sending the same
 * question in many spellings.
 *
 * - the route's pattern, not its path;
 * - `:asset` as the asset it names, case normalised (`eth`, `%45TH` and `ETH` are one key); an
 *   asset we do not list is the 404 the route would answer, before the cache is looked at;
 * - the query parameters the route declares, sorted; undeclared ones are ignored where the route
 *   takes no query, and make the request uncacheable where the route refuses them (its validation
 *   then answers 400, never a kept 200);
 * - `bounded` when every value comes from a closed set (an enum): those keys are a small, finite set
 *   (the assets × the declared choices) and are kept in full; a key with a free value (a date, a
 *   number) goes to a smaller partition of its own, where such keys evict only each other.
 */
import { findAsset, UnknownAssetError } from '@wh/market'
import type { FastifyRequest } from 'fastify'

export interface CacheKey {
  readonly key: string
  /** every value from a closed set: the key belongs to a finite set */
  readonly bounded: boolean
}

interface QuerySchema {
  readonly properties?: Readonly<Record<string, { readonly enum?: readonly unknown[] }>>
  readonly additionalProperties?: boolean
}

/** The `:asset` of the request as the symbol it names; UnknownAssetError (404) for one we do not list. */
function assetOf(request: FastifyRequest): string | undefined {
  const raw = (request.params as { asset?: unknown } | undefined)?.asset
  if (raw === undefined) return undefined
  const asset = typeof raw === 'string' ? findAsset(raw) : undefined
  if (asset?.kind !== 'underlying') throw new UnknownAssetError(String(raw))
  return asset.symbol
}

/**
 * The request's canonical key, or undefined when it must not be answered from the cache (a query
 * parameter the route refuses, a value not one of its choices, a repeated parameter).
 */
export function cacheKeyOf(request: FastifyRequest): CacheKey | undefined {
  const route = request.routeOptions.url ?? ''
  const asset = assetOf(request)
  const schema = (request.routeOptions.schema as { querystring?: QuerySchema } | undefined)?.querystring
  const declared = schema?.properties ?? {}
  const query = (request.query ?? {}) as Record<string, unknown>
  const parts: string[] = []
  let bounded = true
  for (const name of Object.keys(query).sort()) {
    const value = query[name]
    const spec = declared[name]
    if (!spec) {
      // a route without a query ignores it; one that refuses it must say so (its validation: 400)
      if (schema && schema.additionalProperties === false) return undefined
      continue
    }
    if (typeof value !== 'string') return undefined
    if (spec.enum) {
      if (!spec.enum.includes(value)) return undefined
    } else bounded = false
    parts.push(`${name}=${value}`)
  }
  return { key: [route, asset ?? '', ...parts].join('\n'), bounded }
}
