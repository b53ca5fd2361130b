/**
 * GET /trading-config (spec 4.2; docs/trading.md): the active TRADING_PROFILE and the constants the wheel
 * runs by. Public, and holds nothing secret: parameters only, never a key, URL or wallet.
 */
import { TradingConfigResponse } from '@wh/api-schemas/trading'
import {
  EPSILON_LADDER_BPS,
  LADDER_DEADLINE_MS,
  LOCK_TTL_MS,
  MARGIN_BUFFER_USD,
  SANITY_THRESHOLD_BPS,
  SWAP_RETRY_STALE_AFTER_MS,
  WHEEL_DEADLINE_UTC,
  WHEEL_RETRY_MS,
} from '@wh/config'
import { type Clock, UNDERLYINGS } from '@wh/core'
import type { ChainReader, QuoteSettings, TradingProfile } from '@wh/trading'
import type { FastifyInstance } from 'fastify'
import { ETAG_NOT_MODIFIED, withEtagHeaders } from '../../plugins/etag'
import { minimumSizesBody } from '../quotes/index'

/** How long the minimum sizes (read live from the exchange) are reused: a public route must not drive reads */
export const MINIMUM_SIZES_CACHE_MS = 60_000

/** Seconds a browser or a CDN may keep the answer: the minimum sizes are computed at most once a minute. */
export const TRADING_CONFIG_MAX_AGE_S = 60

export interface TradingConfigOptions {
  profile: TradingProfile
  wheelEnabled: boolean
  /** PLATFORM_FEE_RATE: the share of each premium the platform keeps, a decimal string */
  platformFeeRate: string
  /** the smallest sensible sizes, computed live from the exchange (docs/trading.md "Economics") */
  minimumSizes?: { chain: ChainReader; settings: QuoteSettings; clock: Clock }
  conversions: { preConvertLeadMinutes: number; fastTickSeconds: number; stuckMinutes: number }
}

const pad = (n: number) => String(n).padStart(2, '0')

export default async function tradingConfigRoutes(app: FastifyInstance, opts: TradingConfigOptions) {
  // built once: the answer never changes while the process runs
  const body = {
    profile: { ...opts.profile, sizes: { ...opts.profile.sizes } },
    wheelEnabled: opts.wheelEnabled,
    platformFeeRate: opts.platformFeeRate,
    wheel: {
      retryMs: WHEEL_RETRY_MS,
      deadlineUtc: `${pad(WHEEL_DEADLINE_UTC.hour)}:${pad(WHEEL_DEADLINE_UTC.minute)}`,
      lockTtlMs: LOCK_TTL_MS,
    },
    conversions: { ...opts.conversions, marginBufferUsd: MARGIN_BUFFER_USD },
    swaps: {
      ladderBps: [...EPSILON_LADDER_BPS],
      sanityThresholdBps: SANITY_THRESHOLD_BPS,
      ladderDeadlineMs: LADDER_DEADLINE_MS,
      retryStaleAfterMs: SWAP_RETRY_STALE_AFTER_MS,
    },
  }
  const m = opts.minimumSizes
  let last: { at: number; value: Promise<Awaited<ReturnType<typeof minimumSizesBody>>> } | undefined
  const sizes =
    m &&
    (() => {
      const wall = Date.now()
      if (!last || wall - last.at >= MINIMUM_SIZES_CACHE_MS || wall < last.at)
        last = { at: wall, value: minimumSizesBody(m.chain, m.settings, UNDERLYINGS, m.clock.now()) }
      return last.value
    })
  app.get(
    '/trading-config',
    {
      config: { etag: { maxAgeS: TRADING_CONFIG_MAX_AGE_S } },
      schema: {
        tags: ['trading'],
        summary: 'The active trading profile and the constants the wheel runs by',
        description:
          '`minimumSizes`: per asset and side, the smallest size whose fees stay within MAX_FEE_SHARE_BPS of the ' +
          'premium, computed from the exchange at most once a minute (docs/trading.md "Economics").',
        response: { 200: withEtagHeaders(TradingConfigResponse), 304: ETAG_NOT_MODIFIED },
      },
    },
    async () => ({ ...body, ...(sizes && { minimumSizes: await sizes() }) }),
  )
}
