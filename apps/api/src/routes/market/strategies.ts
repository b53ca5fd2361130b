/**
 * GET /:asset/strategies (spec 4.2, public; docs/market-data.md "Strategies"): the platform's
 * strategies on an asset under TRADING_PROFILE, the cycle each sells now, per-cycle history and
 * statistics with the losing cycles in every figure, against holding the asset. The read model is
 * @wh/market's `strategiesReader`; this plugin maps it to HTTP.
 */

import { AssetParams } from '@wh/api-schemas/market'
import { StrategiesQuery, StrategiesResponse } from '@wh/api-schemas/strategies'
import { type StrategiesReaderOptions, strategiesReader } from '@wh/market'
import type { FastifyInstance } from 'fastify'
import type Type from 'typebox'
import { NOT_MODIFIED, withCacheHeaders } from './public-cache'

export type StrategiesOptions = StrategiesReaderOptions

export async function strategiesRoutes(app: FastifyInstance, opts: StrategiesOptions) {
  const read = strategiesReader(opts)
  app.get<{ Params: Type.Static<typeof AssetParams>; Querystring: Type.Static<typeof StrategiesQuery> }>(
    '/:asset/strategies',
    {
      // kept until the next strategy event or price (routes/market/public-cache.ts)
      config: { publicCache: { maxAgeS: 5 } },
      schema: {
        tags: ['market'],
        summary: 'Strategies on an asset: parameters, the current cycle, per-cycle history, statistics with losses',
        params: AssetParams,
        querystring: StrategiesQuery,
        response: {
          200: withCacheHeaders(StrategiesResponse),
          304: NOT_MODIFIED,
          400: { $ref: 'ErrorBody#' },
          404: { $ref: 'ErrorBody#' },
        },
      },
    },
    async (request) => read(request.params.asset, request.query),
  )
}
