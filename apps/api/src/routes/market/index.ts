/**
 * Public market data (spec 4.2, 5.2 rule 5: no authentication): the asset list, index-price charts
 * from the candles the worker's feed stores (a chart never calls the exchange), the fees that apply
 * to an asset, and WS /ws/prices (ws-prices.ts). docs/market-data.md describes shapes and policies.
 */

import { AssetParams, AssetsResponse, ChartQuery, ChartResponse, FeesResponse } from '@wh/api-schemas/market'
import { type Clock, systemClock } from '@wh/core'
import type { Sql } from '@wh/db'
import { fromE18, toE18 } from '@wh/exchange'
import {
  CANDLE_INTERVAL_MS,
  type CandleInterval,
  CHART_MAX_CANDLES,
  closeAt,
  depositRoutesOf,
  E18,
  type FeeEstimator,
  findAsset,
  gasLimitOf,
  MARKET_ASSETS,
  MARKET_NAMES,
  type MarketAsset,
  type MarketNames,
  optionFeeSchedule,
  optionSaleFees,
  type PriceUpdate,
  readCandles,
  readLatestPrices,
  rpcFeeEstimator,
  strategyNames,
  WS_MESSAGE_SCHEMAS,
} from '@wh/market'
import type { TradingProfile } from '@wh/trading'
import type { ChainInfo, ChainName } from '@wh/wallet'
import type { FastifyInstance } from 'fastify'
import type Type from 'typebox'
import { InvalidChartRangeError, UnknownAssetError } from './errors'
import { NOT_MODIFIED, publicCache, withCacheHeaders } from './public-cache'
import { chartOverlays, offeredStrategies, strategiesRoutes } from './strategies'
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
}

/** Seconds a public answer may be kept (by this process, a CDN or a browser) without an event. */
export const PUBLIC_MAX_AGE_S = { assets: 5, chart: 5, fees: 15, strategies: 5 } as const

const DAY_MS = 86_400_000
/** How long the 24 h reference close of an asset is reused (it moves once a minute). */
const REFERENCE_CACHE_MS = 60_000
/** Default chart length when `from` is absent, in intervals. */
const DEFAULT_CHART_CANDLES = 300
/** Stand-ins for the worked fee example before the feed has a price (flagged `illustrative`). */
const ILLUSTRATIVE_INDEX_USD: Readonly<Record<string, string>> = { ETH: '3000', BTC: '90000' }

/** The underlying `:asset` names, or a 404 in the error shape. */
function underlyingOf(asset: string): MarketAsset {
  const a = findAsset(asset)
  if (a?.kind !== 'underlying') throw new UnknownAssetError(asset)
  return a
}

/** (a − b) / b in percent, 2 decimals, truncated toward zero; bigint only. */
function changePct(nowE18: bigint, refE18: bigint): string {
  const bp = ((nowE18 - refE18) * 10_000n) / refE18
  const neg = bp < 0n
  const abs = neg ? -bp : bp
  return `${neg ? '-' : ''}${abs / 100n}.${(abs % 100n).toString().padStart(2, '0')}`
}

const EARLIEST_MS = Date.parse('0001-01-01T00:00:00Z')
const LATEST_MS = Date.parse('9999-12-31T23:59:59.999Z')

export default async function marketRoutes(app: FastifyInstance, opts: MarketRoutesOptions) {
  const { sql, redis } = opts
  const names = opts.names ?? MARKET_NAMES
  const clock = opts.clock ?? systemClock
  const fees = opts.fees ?? rpcFeeEstimator(opts.chains, () => clock.now().getTime())
  const reference = new Map<string, { at: number; minute: number; value: bigint | undefined }>()
  // the profile is fixed for the process: what each asset offers is built once
  const offered = new Map(MARKET_ASSETS.map((a) => [a.symbol, offeredStrategies(a.symbol, opts.profile)]))
  // before the routes (and the child plugins) are registered, so the hooks cover them all
  const underlyings = MARKET_ASSETS.filter((a) => a.kind === 'underlying').map((a) => a.symbol)
  await publicCache(app, {
    redis,
    channels: [
      ...underlyings.map((a) => names.priceChannel(a)),
      ...underlyings.map((a) => strategyNames(names).channel(a)),
    ],
    enabled: opts.publicCache !== false,
  })

  async function latestOf(assets: readonly MarketAsset[]): Promise<(PriceUpdate | undefined)[]> {
    const raws = await readLatestPrices(
      redis,
      names,
      assets.map((a) => a.symbol),
    )
    return raws.map((r) => (r ? (JSON.parse(r) as PriceUpdate) : undefined))
  }

  /** The close 24 h before `tsMs`, cached per asset and minute. */
  async function referenceClose(asset: string, tsMs: number): Promise<bigint | undefined> {
    const minute = Math.floor((tsMs - DAY_MS) / 60_000)
    const hit = reference.get(asset)
    const now = clock.now().getTime()
    if (hit && hit.minute === minute && now - hit.at < REFERENCE_CACHE_MS) return hit.value
    const value = await closeAt(sql, asset, tsMs - DAY_MS)
    reference.set(asset, { at: now, minute, value })
    return value
  }

  app.get(
    '/assets',
    {
      config: { publicCache: { maxAgeS: PUBLIC_MAX_AGE_S.assets } },
      schema: {
        tags: ['market'],
        summary: 'Assets: deposit chains and tokens, index price and 24 h change, the strategies offered, availability',
        response: { 200: withCacheHeaders(AssetsResponse), 304: NOT_MODIFIED },
      },
    },
    async () => {
      const priced = MARKET_ASSETS.filter((a) => a.kind === 'underlying')
      const latest = await latestOf(priced)
      const assets = await Promise.all(
        MARKET_ASSETS.map(async (a) => {
          const base = {
            symbol: a.symbol,
            name: a.name,
            kind: a.kind,
            exchangeCurrency: a.exchangeCurrency,
            decimals: a.decimals,
            availability: a.availability,
            depositRoutes: depositRoutesOf(a.symbol, opts.chains),
            strategies: offered.get(a.symbol) ?? [],
          }
          if (a.kind === 'cash') return { ...base, indexPrice: '1', priceAt: null, change24hPct: '0.00' }
          const u = latest[priced.indexOf(a)]
          if (!u) return { ...base, indexPrice: null, priceAt: null, change24hPct: null }
          const ref = await referenceClose(a.symbol, Date.parse(u.ts))
          return {
            ...base,
            indexPrice: u.index,
            priceAt: u.ts,
            change24hPct: ref === undefined ? null : changePct(toE18(u.index), ref),
          }
        }),
      )
      return { assets }
    },
  )

  app.get<{ Params: Type.Static<typeof AssetParams>; Querystring: Type.Static<typeof ChartQuery> }>(
    '/:asset/chart',
    {
      config: { publicCache: { maxAgeS: PUBLIC_MAX_AGE_S.chart } },
      schema: {
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
      },
    },
    async (request) => {
      const asset = underlyingOf(request.params.asset)
      const interval = (request.query.interval ?? '1h') as CandleInterval
      const sizeMs = CANDLE_INTERVAL_MS[interval]
      const toMs = request.query.to ? Date.parse(request.query.to) : clock.now().getTime()
      const fromMs = request.query.from ? Date.parse(request.query.from) : toMs - DEFAULT_CHART_CANDLES * sizeMs
      // years 1..9999: a default start (to - N candles) or an offset can reach year 0, which Postgres refuses (a 500)
      if (![fromMs, toMs].every((t) => t >= EARLIEST_MS && t <= LATEST_MS))
        throw new InvalidChartRangeError('from and to must be ISO-8601, in the years 1 to 9999')
      if (fromMs >= toMs) throw new InvalidChartRangeError('from must be before to')
      if ((toMs - fromMs) / sizeMs > CHART_MAX_CANDLES)
        throw new InvalidChartRangeError(`at most ${CHART_MAX_CANDLES} candles per request: narrow the range`)
      const [candles, overlays] = await Promise.all([
        readCandles(sql, { asset: asset.symbol, interval, fromMs, toMs }),
        chartOverlays(sql, asset.symbol, fromMs, toMs),
      ])
      return {
        asset: asset.symbol,
        interval,
        from: new Date(fromMs).toISOString(),
        to: new Date(toMs).toISOString(),
        candles: candles.map((c) => ({
          t: new Date(c.bucketStartMs).toISOString(),
          open: fromE18(c.openE18),
          high: fromE18(c.highE18),
          low: fromE18(c.lowE18),
          close: fromE18(c.closeE18),
          ticks: c.tickCount,
        })),
        overlays: overlays.overlays,
        returns: overlays.returns,
      }
    },
  )

  app.get<{ Params: Type.Static<typeof AssetParams> }>(
    '/:asset/fees',
    {
      config: { publicCache: { maxAgeS: PUBLIC_MAX_AGE_S.fees } },
      schema: {
        tags: ['market'],
        summary: 'Fees that apply to an asset: ours, the exchange’s, network fees, and a worked example',
        params: AssetParams,
        response: { 200: withCacheHeaders(FeesResponse), 304: NOT_MODIFIED, 404: { $ref: 'ErrorBody#' } },
      },
    },
    async (request) => {
      const asset = underlyingOf(request.params.asset)
      const [latest] = await latestOf([asset])
      const tokens = [...new Set([asset.symbol, 'USDC'])]
      const chains = [...opts.chains.values()]
      const feeByChain = await Promise.all(chains.map((c) => fees.feePerGasWei(c.name)))
      const network = chains.flatMap((info, i) =>
        info.tokens
          .filter((t) => tokens.includes(t.symbol))
          .map((t) => {
            const gasLimit = gasLimitOf(t.symbol)
            const perGas = feeByChain[i]
            const route = depositRoutesOf(t.symbol, new Map([[info.name, info]]))[0]
            return {
              chain: info.name,
              chainId: info.chainId,
              token: t.symbol,
              deposit: {
                minDeposit: route?.minDeposit ?? '0',
                confirmations: info.confirmations,
                transferPaidBy: 'user' as const,
                sweepGasPaidBy: 'platform' as const,
              },
              withdrawal:
                perGas === undefined
                  ? {
                      available: false,
                      asset: 'ETH' as const,
                      gasLimit: gasLimit.toString(),
                      paidBy: 'platform' as const,
                    }
                  : {
                      available: true,
                      asset: 'ETH' as const,
                      estimate: fromE18(gasLimit * perGas), // wei are e18 of ETH
                      gasLimit: gasLimit.toString(),
                      paidBy: 'platform' as const,
                    },
            }
          }),
      )

      // the worked example: one ATM call at its live mark, or fixed figures flagged illustrative
      const atMs = latest ? Date.parse(latest.ts) : 0
      const atmCall = latest?.instruments.find(
        (i) => i.kind === 'option' && i.optionType === 'C' && i.expiry !== null && Date.parse(i.expiry) > atMs,
      )
      const illustrative = !latest || !atmCall || toE18(atmCall.mark) <= 0n
      const indexE18 = latest ? toE18(latest.index) : toE18(ILLUSTRATIVE_INDEX_USD[asset.symbol] ?? '1000')
      const premiumE18 = illustrative ? indexE18 / 50n : toE18(atmCall.mark) // 2 % of the index as a stand-in
      const amountE18 = E18
      const f = optionSaleFees({ indexE18, premiumE18, amountE18, platformFeeRate: opts.platformFeeRate })
      return {
        asset: asset.symbol,
        platform: {
          feeRate: opts.platformFeeRate,
          appliesTo: 'premium' as const,
          description:
            'PLATFORM_FEE_RATE × the premium of each option sold, taken from the subaccount with the fill ' +
            '(option_sold). No fee on deposits, withdrawals or balances.',
        },
        exchange: {
          name: 'Derive',
          options: optionFeeSchedule(),
          description:
            'Per fill: the rate × index price × amount, capped at capRateOfOptionValue × option price × amount; ' +
            'a taker order also pays baseFeeUsd once. Orders rest as maker first.',
        },
        network,
        example: {
          description: illustrative
            ? `Selling 1 ${asset.symbol} call at an illustrative premium (2 % of an illustrative index): no live price yet`
            : `Selling 1 ${atmCall?.name} at its current mark`,
          illustrative,
          amount: fromE18(amountE18),
          indexPrice: fromE18(indexE18),
          instrument: illustrative ? null : (atmCall?.name ?? null),
          premiumPerOption: fromE18(premiumE18),
          grossPremium: fromE18(f.grossPremiumE18),
          exchangeFeeMaker: fromE18(f.exchangeFeeMakerE18),
          exchangeFeeTaker: fromE18(f.exchangeFeeTakerE18),
          platformFee: fromE18(f.platformFeeE18),
          netPremiumMaker: fromE18(f.netPremiumMakerE18),
        },
      }
    },
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
