/** Schema of GET /trading-config (spec 4.2; docs/trading.md): parameters only, never a key, URL or wallet. */

import Type from 'typebox'
import { LiteralUnion } from './literals'
import { MinimumSizes } from './quotes'
import { WheelSettingBounds } from './wheels'

export const Sizes = Type.Object({ min: Type.String(), step: Type.String(), max: Type.String() })

export const TradingConfigResponse = Type.Object({
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
    endOfWindow: LiteralUnion(['cancel', 'cross']),
    maxCrossBelowMarkBps: Type.Integer(),
    wheelSettingBounds: WheelSettingBounds,
  }),
  wheelEnabled: Type.Boolean(),
  platformFeeRate: Type.String({ description: 'share of each premium kept by the platform' }),
  minimumSizes: Type.Optional(MinimumSizes),
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
