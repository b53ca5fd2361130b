/**
 * GET /trading-config (spec 4.2, DESIGN): the active TRADING_PROFILE and the constants the wheel
 * runs by. Public, and holds nothing secret: parameters only, never a key, URL or wallet.
 */
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
import Type from 'typebox'

export interface TradingConfigOptions {
  profile: TradingProfile
  wheelEnabled: boolean
  /** PLATFORM_FEE_RATE: the share of each premium the platform keeps, a decimal string */
  platformFeeRate: string
  conversions: { preConvertLeadMinutes: number; fastTickSeconds: number; stuckMinutes: number }
}

const Sizes = Type.Object({ min: Type.String(), step: Type.String(), max: Type.String() })

const TradingConfigResponse = Type.Object({
  profile: Type.Object({
    name: Type.String(),
    description: Type.String(),
    putTargetDeltaBps: Type.Integer({ description: '|delta| of the put sold, basis points (1500 = 0.15)' }),
    callTargetDeltaBps: Type.Integer(),
    deltaToleranceBps: Type.Integer(),
    minTenorHours: Type.Integer(),
    maxTenorDays: Type.Integer(),
    sizes: Type.Record(Type.String(), Sizes, { description: 'per asset, in asset units' }),
    minAnnualisedYieldBps: Type.Integer(),
    makerWindowMs: Type.Integer(),
    repriceEveryMs: Type.Integer(),
    makerStartAboveMarkBps: Type.Integer(),
    endOfWindow: Type.Union([Type.Literal('cancel'), Type.Literal('cross')]),
    maxCrossBelowMarkBps: Type.Integer(),
  }),
  wheelEnabled: Type.Boolean(),
  platformFeeRate: Type.String({ description: 'share of each premium kept by the platform' }),
  wheel: Type.Object({
    retryMs: Type.Integer(),
    deadlineUtc: Type.String({ description: 'HH:MM UTC after which a day is not retried' }),
    lockTtlMs: Type.Integer(),
  }),
  conversions: Type.Object({
    preConvertLeadMinutes: Type.Integer(),
    fastTickSeconds: Type.Integer(),
    stuckMinutes: Type.Integer(),
    marginBufferUsd: Type.String(),
  }),
  swaps: Type.Object({
    ladderBps: Type.Array(Type.Integer()),
    sanityThresholdBps: Type.Integer(),
    ladderDeadlineMs: Type.Integer(),
    retryStaleAfterMs: Type.Integer(),
  }),
})

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
