/**
 * Public market data (spec 4.2, 5.2 rule 5: no authentication): the asset list, index-price charts
 * from the candles the worker's feed stores (a chart never calls the exchange), the fees that apply
 * to an asset (read by @wh/market's `marketReader`), the strategies (strategies.ts) and the two
 * WebSockets. docs/market-data.md describes shapes and policies.
 */

import { AssetParams, AssetsResponse, ChartQuery, ChartResponse, FeesResponse } from '@wh/api-schemas/market'
import { type Clock, systemClock } from '@wh/core'
import type { Sql } from '@wh/db'
import {
  MARKET_ASSETS,
  MARKET_NAMES,
  type MarketNames,
  marketReader,
  strategyNames,
  WS_MESSAGE_SCHEMAS,
} from '@wh/market'
import type { TradingProfile } from '@wh/trading'
import { type ChainInfo, type ChainName, type FeeEstimator, rpcFeeEstimator } from '@wh/wallet'
import type { FastifyInstance } from 'fastify'
import type Type from 'typebox'
import { NOT_MODIFIED, publicCache, withCacheHeaders } from './public-cache'
import { strategiesRoutes } from './strategies'
import { wsStrategiesRoute } from './strategies-ws'
import { wsPricesRoute } from './ws-prices'

export interface MarketRoutesOptions {
  sql: Sql
  redis: import('ioredis').Redis
  chains: ReadonlyMap<ChainName, ChainInfo>
  /** PLATFORM_FEE_RATE */
  platformFeeRate: string
  names?: MarketNames
  fees?: FeeEstimator
  clock?: Clock
  /** TRADING_PROFILE: the parameters of GET /:asset/strategies */
  profile: TradingProfile
  /** reuse of a strategies answer's Postgres part (tests: 0) */
  strategiesCacheMs?: number
  /** keep the public answers until the feed's next event (public-cache.ts); on unless false */
  publicCache?: boolean
  /** answers kept at most (default PUBLIC_CACHE_MAX_ENTRIES; tests make it small) */
  publicCacheMaxEntries?: number
}

/** Seconds a public answer may be kept (by this process, a CDN or a browser) without an event. */
export const PUBLIC_MAX_AGE_S = { assets: 5, chart: 5, fees: 15, strategies: 5 } as const

type AssetParamsValue = Type.Static<typeof AssetParams>
const cacheFor = (route: keyof typeof PUBLIC_MAX_AGE_S) => ({ publicCache: { maxAgeS: PUBLIC_MAX_AGE_S[route] } })

const assetsSchema = {
  tags: ['market'],
  summary: 'Assets: deposit chains and tokens, index price and 24 h change, the strategies offered, availability',
  response: { 200: withCacheHeaders(AssetsResponse), 304: NOT_MODIFIED },
}
const chartSchema = {
  tags: ['market'],
  summary: 'Index-price candles of an asset (from stored candles; never calls the exchange)',
  params: AssetParams,
  querystring: ChartQuery,
  response: {
    200: withCacheHeaders(ChartResponse),
    304: NOT_MODIFIED,
    400: { $ref: 'ErrorBody#' },
    404: { $ref: 'ErrorBody#' },
  },
}
const feesSchema = {
  tags: ['market'],
  summary: 'Fees that apply to an asset: ours, the exchange’s, network fees, and a worked example',
  params: AssetParams,
  response: { 200: withCacheHeaders(FeesResponse), 304: NOT_MODIFIED, 404: { $ref: 'ErrorBody#' } },
}

export default async function marketRoutes(app: FastifyInstance, opts: MarketRoutesOptions) {
  const { sql, redis } = opts
  const names = opts.names ?? MARKET_NAMES
  const clock = opts.clock ?? systemClock
  const fees = opts.fees ?? rpcFeeEstimator(opts.chains, () => clock.now().getTime())
  const read = marketReader({ ...opts, names, fees, clock })
  // before the routes (and the child plugins) are registered, so the hooks cover them all
  const underlyings = MARKET_ASSETS.filter((a) => a.kind === 'underlying').map((a) => a.symbol)
  await publicCache(app, {
    redis,
    channels: [
      ...underlyings.map((a) => names.priceChannel(a)),
      ...underlyings.map((a) => strategyNames(names).channel(a)),
    ],
    enabled: opts.publicCache !== false,
    ...(opts.publicCacheMaxEntries !== undefined && { maxEntries: opts.publicCacheMaxEntries }),
  })

  app.get('/assets', { config: cacheFor('assets'), schema: assetsSchema }, () => read.assets())
  app.get<{ Params: AssetParamsValue; Querystring: Type.Static<typeof ChartQuery> }>(
    '/:asset/chart',
    { config: cacheFor('chart'), schema: chartSchema },
    (request) => read.chart(request.params.asset, request.query),
  )
  app.get<{ Params: AssetParamsValue }>('/:asset/fees', { config: cacheFor('fees'), schema: feesSchema }, (request) =>
    read.fees(request.params.asset),
  )

  // the WebSocket message shapes, as components of the OpenAPI document
  for (const schema of WS_MESSAGE_SCHEMAS) app.addSchema(schema)
  await app.register(wsPricesRoute, { redis, names })
  const strategies = { sql, redis, names, profile: opts.profile, clock }
  await app.register(strategiesRoutes, {
    ...strategies,
    ...(opts.strategiesCacheMs !== undefined && { cacheMs: opts.strategiesCacheMs }),
  })
  await app.register(wsStrategiesRoute, strategies)
}
