/**
 * TypeBox schemas of the market-data controller (spec 4.2: GET /assets, /:asset/chart, /:asset/fees;
 * WS /ws/prices). Prices and amounts are decimal strings; rates are fractions (0.0003 = 0.03 %).
 */
import { ASSET_AVAILABILITIES, CANDLE_INTERVALS, CHART_MAX_CANDLES, STRATEGY_KINDS } from '@wh/market'
import Type from 'typebox'
import { LiteralUnion } from './literals'
import { StrategyParameters } from './strategies'

const Decimal = (description: string) => Type.String({ pattern: '^-?[0-9]+(\\.[0-9]+)?$', description })
const Timestamp = (description: string) => Type.String({ format: 'date-time', description })
const Nullable = <T extends Type.TSchema>(t: T) => Type.Union([t, Type.Null()])

export const AssetParams = Type.Object({
  asset: Type.String({ minLength: 1, maxLength: 16, description: 'an underlying, e.g. ETH (case-insensitive)' }),
})

export const DepositRoute = Type.Object(
  {
    chain: Type.String(),
    chainId: Type.Integer(),
    token: Type.String(),
    contract: Nullable(Type.String({ description: 'null for the native asset' })),
    decimals: Type.Integer(),
    minDeposit: Decimal('smallest deposit credited, in the token'),
    confirmations: Type.Integer({ description: 'blocks on top of the deposit before it counts' }),
  },
  { title: 'DepositRoute' },
)

export const AssetStrategy = Type.Object({
  id: Type.String({ description: 'e.g. eth-wheel, as in GET /:asset/strategies' }),
  kind: LiteralUnion(STRATEGY_KINDS, { description: 'wheel | put (cash-secured) | call (covered)' }),
  name: Type.String(),
  description: Type.String(),
  parameters: StrategyParameters,
})

export const AssetItem = Type.Object(
  {
    symbol: Type.String(),
    name: Type.String(),
    kind: LiteralUnion(['underlying', 'cash']),
    exchangeCurrency: Type.String({ description: "the exchange's currency name" }),
    decimals: Type.Integer(),
    availability: LiteralUnion(ASSET_AVAILABILITIES, { description: 'active | deposit-only | withdraw-only | paused' }),
    depositRoutes: Type.Array(DepositRoute, { description: 'chains and tokens that take deposits of this asset' }),
    strategies: Type.Array(AssetStrategy, {
      description:
        'the strategies offered on this asset under TRADING_PROFILE (wheel, cash-secured put, covered call); ' +
        'empty for the cash currency. History and statistics: GET /:asset/strategies',
    }),
    indexPrice: Nullable(Decimal('latest index price, USD (cash: 1); null before the feed has one')),
    priceAt: Nullable(Timestamp('exchange time of that price')),
    change24hPct: Nullable(
      Decimal('change of the index over 24 h in percent (2 decimals); null until the feed is 24 h old'),
    ),
  },
  { title: 'Asset' },
)
export const AssetsResponse = Type.Object({ assets: Type.Array(AssetItem) }, { $id: 'AssetsResponse' })

export const ChartQuery = Type.Object(
  {
    interval: Type.Optional(LiteralUnion(CANDLE_INTERVALS, { default: '1h', description: 'candle interval' })),
    from: Type.Optional(Timestamp('start (inclusive), ISO-8601; default: `to` minus 300 intervals')),
    to: Type.Optional(Timestamp('end (exclusive), ISO-8601; default: now')),
  },
  { additionalProperties: false },
)

export const Candle = Type.Object(
  {
    t: Timestamp('start of the candle (UTC, aligned to the interval)'),
    open: Decimal('USD'),
    high: Decimal('USD'),
    low: Decimal('USD'),
    close: Decimal('USD'),
    ticks: Type.Integer({ description: 'index ticks folded into the candle' }),
  },
  { title: 'Candle' },
)

export const Overlay = Type.Object(
  {
    cycleId: Type.String({ description: '<strategy>:<instrument>, as in GET /:asset/strategies' }),
    strategy: LiteralUnion(['wheel', 'put', 'call']),
    side: LiteralUnion(['put', 'call']),
    instrument: Type.String(),
    strike: Decimal('USD'),
    soldAt: Timestamp('first fill of the cycle'),
    expiry: Timestamp('expiry of the option sold'),
    ivAtSale: Nullable(
      Decimal(
        "the option's mark implied volatility (a fraction) when its legs were sold, weighted by contracts; " +
          'display only; null when no leg recorded one',
      ),
    ),
    outcome: Nullable(LiteralUnion(['itm', 'otm'])),
    cumulativeRealisedReturnPct: Nullable(
      Decimal("the strategy's cumulative realised return after this cycle's expiry, percent; null while open"),
    ),
  },
  { title: 'ChartOverlay' },
)

export const ReturnPoint = Type.Object(
  {
    strategy: LiteralUnion(['wheel', 'put', 'call']),
    t: Timestamp('an expiry at which cycles of the strategy settled'),
    cumulativeRealisedReturnPct: Decimal('compounded realised return of the strategy up to t, percent'),
  },
  { title: 'ReturnPoint' },
)

export const ChartResponse = Type.Object(
  {
    asset: Type.String(),
    interval: Type.String(),
    from: Timestamp('start of the range (inclusive)'),
    to: Timestamp('end of the range (exclusive)'),
    candles: Type.Array(Candle, {
      description: `index-price candles stored as the feed arrives (never read from the exchange), oldest first, at most ${CHART_MAX_CANDLES}; buckets without ticks are absent`,
    }),
    overlays: Type.Array(Overlay, {
      description: 'one per cycle whose life (first fill to expiry) meets the range, oldest first, at most 1,000',
    }),
    returns: Type.Array(ReturnPoint, {
      description: "each strategy's cumulative realised return at every expiry in the range, oldest first",
    }),
  },
  { $id: 'ChartResponse' },
)

const NetworkFeeEstimate = Type.Object({
  available: Type.Boolean({ description: 'false when the chain could not be reached; no estimate then' }),
  asset: Type.Literal('ETH'),
  estimate: Type.Optional(Decimal('gas limit × current max fee per gas, in ETH')),
  gasLimit: Type.String(),
  paidBy: LiteralUnion(['user', 'platform']),
})

export const FeesResponse = Type.Object(
  {
    asset: Type.String(),
    platform: Type.Object({
      feeRate: Decimal('PLATFORM_FEE_RATE, a fraction'),
      appliesTo: Type.Literal('premium'),
      description: Type.String(),
    }),
    exchange: Type.Object({
      name: Type.String(),
      options: Type.Object({
        makerRate: Decimal('rate on the notional (index × amount) for a maker fill'),
        takerRate: Decimal('rate on the notional for a taker fill'),
        baseFeeUsd: Decimal('flat USD per taker order'),
        capRateOfOptionValue: Nullable(Decimal('the rate part is capped at this share of the option value')),
      }),
      description: Type.String(),
    }),
    network: Type.Array(
      Type.Object({
        chain: Type.String(),
        chainId: Type.Integer(),
        token: Type.String(),
        deposit: Type.Object({
          minDeposit: Decimal('smallest deposit credited, in the token'),
          confirmations: Type.Integer(),
          transferPaidBy: Type.Literal('user'),
          sweepGasPaidBy: Type.Literal('platform'),
        }),
        withdrawal: NetworkFeeEstimate,
      }),
      { description: 'per chain and token: deposits and withdrawals of this asset and of the cash currency' },
    ),
    example: Type.Object({
      description: Type.String(),
      illustrative: Type.Boolean({ description: 'true when no live price exists and fixed figures stand in' }),
      amount: Decimal('options sold'),
      indexPrice: Decimal('USD'),
      instrument: Nullable(Type.String()),
      premiumPerOption: Decimal('USD'),
      grossPremium: Decimal('USD'),
      exchangeFeeMaker: Decimal('USD'),
      exchangeFeeTaker: Decimal('USD'),
      platformFee: Decimal('USD'),
      netPremiumMaker: Decimal('gross premium − maker exchange fee − platform fee, USD'),
    }),
  },
  { $id: 'FeesResponse' },
)

export const WsPricesQuery = Type.Object(
  {
    assets: Type.Optional(
      Type.String({ maxLength: 100, description: 'comma-separated assets to start with; default: all priced assets' }),
    ),
  },
  { additionalProperties: false },
)
