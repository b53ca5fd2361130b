/**
 * TypeBox schemas of the economics routes (docs/trading.md "Economics"): POST /quotes, the fee
 * warning POST /positions may carry, the minimum sizes of GET /trading-config, and
 * GET /wheels/{id}/cycles. Money is decimal strings in USDC; shares are integer basis points.
 */
import { UNDERLYINGS } from '@wh/core'
import Type from 'typebox'
import { LiteralUnion } from './literals'
import { WheelSettingsInput } from './wheels'

const Timestamp = Type.String({ format: 'date-time' })
const Nullable = <T extends Type.TSchema>(t: T) => Type.Union([t, Type.Null()])
const Amount = (description: string) => Type.String({ pattern: '^-?[0-9]+(\\.[0-9]+)?$', description })
const Bps = (description: string) => Type.Integer({ description: `${description}, basis points` })

export const QuoteBody = Type.Object(
  {
    asset: LiteralUnion(UNDERLYINGS, { description: 'the underlying' }),
    side: LiteralUnion(['put', 'call', 'wheel'], {
      description: 'as POST /positions: a wheel is quoted as its first leg, a put',
    }),
    amount: Type.String({
      pattern: '^[0-9]{1,40}(\\.[0-9]{1,18})?$',
      description: 'collateral to commit, a decimal string: USDC for a put or a wheel, the underlying for a call',
    }),
    settings: Type.Optional(WheelSettingsInput),
  },
  { additionalProperties: false, title: 'QuoteRequest' },
)

export const FeeWarning = Type.Object(
  {
    code: LiteralUnion(['FEES_EXCEED_PREMIUM_SHARE', 'FEES_NOT_CHECKED'], {
      description:
        'FEES_EXCEED_PREMIUM_SHARE: fees take more than MAX_FEE_SHARE_BPS of the premium at the current marks; ' +
        'FEES_NOT_CHECKED: no quote could be made (the exchange unreadable, or no strike the tick would sell now)',
    }),
    message: Type.String(),
  },
  { title: 'FeeWarning' },
)

export const PositionQuote = Type.Object(
  {
    asset: Type.String(),
    side: LiteralUnion(['put', 'call'], { description: 'the leg quoted (a wheel starts with a put)' }),
    collateralCurrency: Type.String(),
    collateral: Amount('the collateral quoted for'),
    instrument: Type.String({ description: 'the option the placing tick would sell now' }),
    strike: Amount('USD'),
    expiry: Timestamp,
    mark: Amount('the option mark per contract, USD'),
    index: Amount('the underlying index, USD'),
    size: Amount('contracts the collateral secures, on the amount step'),
    minimumSize: Amount('the larger of the instrument minimum and the profile minimum'),
    premium: Amount('size × mark, USDC, before fees'),
    exchangeFee: Amount(
      "the exchange's fee in the worst case of the profile: taker (base fee + rate) when it crosses at the window's end, else maker",
    ),
    exchangeFeeMaker: Amount('the fee if all of it fills as maker (resting post-only orders, no base fee)'),
    exchangeFeeTaker: Nullable(Amount('the fee if all of it is crossed as taker; null when the profile never crosses')),
    platformFee: Amount('PLATFORM_FEE_RATE × premium, rounded down'),
    netPremium: Amount('premium − exchangeFee − platformFee'),
    exchangeFeeShareBps: Nullable(Bps('exchangeFee / premium, rounded up')),
    platformFeeShareBps: Nullable(Bps('platformFee / premium, rounded up')),
    feeShareBps: Nullable(Bps('(exchangeFee + platformFee) / premium, rounded up; null without a premium')),
    annualisedYieldBps: Bps('mark over the collateral per contract (strike, or index for a call), a year'),
    netAnnualisedYieldBps: Bps('netPremium over the collateral the size ties up, a year'),
    maxFeeShareBps: Bps('MAX_FEE_SHARE_BPS'),
    feeSharePolicy: LiteralUnion(['refuse', 'warn', 'off'], { description: 'FEE_SHARE_POLICY of POST /positions' }),
    wouldPlace: Type.Boolean({ description: 'false when the tick would not sell it now (see reason)' }),
    reason: Nullable(Type.String({ description: 'why the tick would not sell it now' })),
    warning: Nullable(FeeWarning),
    quotedAt: Timestamp,
  },
  { title: 'PositionQuote' },
)

export const MinimumSize = Type.Object(
  {
    side: LiteralUnion(['put', 'call']),
    contracts: Nullable(Amount('the smallest size whose fees stay within maxFeeShareBps of the premium')),
    collateral: Nullable(Amount('the collateral that size needs (USDC for a put, the underlying for a call)')),
    collateralCurrency: Type.String(),
    instrument: Nullable(Type.String({ description: 'the strike it was computed on (the one the tick picks now)' })),
    mark: Nullable(Amount('USD')),
    index: Nullable(Amount('USD')),
    reason: Nullable(Type.String({ description: 'why there is no figure' })),
  },
  { title: 'MinimumSize' },
)

export const MinimumSizes = Type.Object(
  {
    maxFeeShareBps: Type.Integer(),
    feeSharePolicy: LiteralUnion(['refuse', 'warn', 'off']),
    computedAt: Timestamp,
    assets: Type.Record(Type.String(), Type.Array(MinimumSize), { description: 'per asset, a put and a call' }),
  },
  {
    title: 'MinimumSizes',
    description:
      'Computed live from the exchange (the strike the placing tick would choose now, its mark and fees), reused ' +
      'for a minute. Only the taker base fee depends on the size, so a profile that never crosses has the profile ' +
      "minimum, or no size at all when the proportional fees alone exceed the share. docs/trading.md 'Economics'",
  },
)

export const WheelParams = Type.Object({ id: Type.String({ format: 'uuid' }) })

export const CyclesQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    cursor: Type.Optional(Type.String({ maxLength: 200, description: 'nextCursor of the previous page' })),
  },
  { additionalProperties: false },
)

export const WheelCycle = Type.Object(
  {
    positionId: Type.String({ format: 'uuid' }),
    cycle: Type.Integer({ description: '1 for the first leg of the wheel' }),
    side: LiteralUnion(['put', 'call']),
    state: Type.String(),
    instrument: Nullable(Type.String()),
    strike: Nullable(Amount('USD')),
    expiry: Nullable(Timestamp),
    size: Amount('contracts sold (net of what was bought back)'),
    outcome: Nullable(LiteralUnion(['itm', 'otm'])),
    premium: Amount('premium received, USDC'),
    exchangeFees: Amount("the exchange's fees of its sales and buy-backs, USDC"),
    platformFee: Amount("the platform's fee, USDC"),
    settlementCost: Amount('paid at an in-the-money expiry, USDC'),
    closeCost: Amount('paid buying it back, USDC'),
    net: Amount('premium − fees − settlement cost − close cost, USDC'),
    cumulativeNet: Amount('the sum of the nets of this cycle and every earlier one, USDC (losses included)'),
    createdAt: Timestamp,
    closedAt: Nullable(Timestamp),
  },
  { title: 'WheelCycle' },
)

export const WheelCyclesResponse = Type.Object(
  {
    wheelId: Type.String({ format: 'uuid' }),
    asset: Type.String(),
    state: Type.String(),
    startAmount: Amount('the USDC the wheel started with (its first leg’s collateral)'),
    cycles: Type.Integer({ description: 'legs of this wheel' }),
    cumulativeNet: Amount('the sum of every cycle’s net, USDC'),
    wheelReturnBps: Nullable(Type.Integer({ description: 'cumulativeNet / startAmount, basis points' })),
    hold: Type.Object(
      {
        startIndex: Nullable(
          Amount('the index at the wheel’s start (last 1m candle at or before it, else the first after)'),
        ),
        index: Nullable(Amount('the index now (the latest 1m candle)')),
        value: Nullable(Amount('startAmount held in the underlying from startIndex, valued at index, USDC')),
        returnBps: Nullable(Type.Integer({ description: 'value / startAmount − 1, basis points' })),
      },
      { description: 'holding the underlying instead, from the stored index candles; null parts without candles' },
    ),
    items: Type.Array(WheelCycle, { description: 'newest first' }),
    nextCursor: Nullable(Type.String()),
  },
  { title: 'WheelCycles' },
)
