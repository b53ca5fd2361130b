/**
 * GET /trading-config (spec 4.2, DESIGN): the active TRADING_PROFILE and the constants the wheel
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
import type { TradingProfile } from '@wh/trading'
import type { FastifyInstance } from 'fastify'

export interface TradingConfigOptions {
  profile: TradingProfile
  wheelEnabled: boolean
  /** PLATFORM_FEE_RATE: the share of each premium the platform keeps, a decimal string */
  platformFeeRate: string
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
  app.get(
    '/trading-config',
    {
      schema: {
        tags: ['trading'],
        summary: 'The active trading profile and the constants the wheel runs by',
        response: { 200: TradingConfigResponse },
      },
    },
    async () => body,
  )
}
