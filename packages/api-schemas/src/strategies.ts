/**
 * TypeBox schemas of GET /:asset/strategies (spec 4.2; docs/market-data.md "Strategies"). Money is
 * a decimal string in USDC (or USD per contract); every ratio is a decimal string computed in
 * bigint: `…Pct` in percent with 4 decimals, `…Ratio` a fraction with 4 decimals. All public and
 * aggregated over every user: no user id, no one user's amount.
 */
import { STRATEGY_KINDS } from '@wh/market'
import Type from 'typebox'
import { LiteralUnion } from './literals'

const Decimal = (description: string) => Type.String({ pattern: '^-?[0-9]+(\\.[0-9]+)?$', description })
const Timestamp = (description: string) => Type.String({ format: 'date-time', description })
const Nullable = <T extends Type.TSchema>(t: T) => Type.Union([t, Type.Null()])
const Kind = LiteralUnion(STRATEGY_KINDS, {
  description: 'wheel: legs opened by wheels; put / call: single legs sold on request',
})
const Side = LiteralUnion(['put', 'call'])

/** Most cycles of history one request returns. */
export const STRATEGY_HISTORY_MAX = 500

export const StrategiesQuery = Type.Object(
  {
    strategy: Type.Optional(Kind),
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: STRATEGY_HISTORY_MAX,
        default: 50,
        description: 'cycles of history per strategy, newest first',
      }),
    ),
  },
  { additionalProperties: false },
)

export const StrategyParameters = Type.Object(
  {
    profile: Type.String({ description: 'TRADING_PROFILE' }),
    sells: Type.Array(Side, { description: 'what the strategy sells: a wheel sells puts in cash, calls in the asset' }),
    putTargetDelta: Nullable(Decimal('|delta| of the put sold')),
    callTargetDelta: Nullable(Decimal('|delta| of the call sold')),
    deltaTolerance: Decimal('a strike further than this from the target delta is not picked'),
    minTenorHours: Type.Integer({ description: 'the nearest expiry at least this far away is sold…' }),
    maxTenorDays: Type.Integer({ description: '…and none further than this' }),
    minAnnualisedYieldPct: Decimal('below this annualised premium yield nothing is sold'),
    sizes: Type.Object({
      min: Decimal('smallest order, contracts'),
      step: Decimal('order sizes are multiples of this'),
      max: Decimal('largest position per user, contracts'),
    }),
    makerWindowMinutes: Type.Integer(),
    repriceEverySeconds: Type.Integer(),
    makerStartAboveMarkPct: Decimal('the first ask sits this far above the mark'),
    endOfWindow: LiteralUnion(['cancel', 'cross']),
    maxCrossBelowMarkPct: Decimal('the end-of-window cross sells down to this far below the mark'),
  },
  { title: 'StrategyParameters' },
)

export const CurrentCycle = Type.Object(
  {
    status: LiteralUnion(['placing', 'open', 'indicative'], {
      description: 'placing/open: legs of this cycle are live; indicative: what the strategy would sell now',
    }),
    side: Side,
    instrument: Type.String(),
    strike: Decimal('USD'),
    expiry: Timestamp('expiry (08:00 UTC, cash-settled)'),
    timeToExpirySeconds: Type.Integer({ minimum: 0 }),
    indexPrice: Nullable(Decimal('latest index from the price feed’s cache, USD')),
    premium: Nullable(Decimal('USD per contract: the average sale price once sold, else the mark')),
    premiumSource: Nullable(LiteralUnion(['sold', 'mark'])),
    mark: Nullable(Decimal('option mark, USD per contract')),
    markSource: Nullable(
      LiteralUnion(['price-feed', 'cycle-opened'], {
        description: 'price-feed: the latest cached ticker; cycle-opened: the quote when the instrument was chosen',
      }),
    ),
    markAt: Nullable(Timestamp('time of that mark')),
    iv: Nullable(Decimal('implied volatility (fraction), display only')),
    delta: Nullable(Decimal('option delta, display only')),
    distanceToStrikePct: Nullable(Decimal('(strike − index) / index, percent')),
    breakeven: Nullable(Decimal('strike − premium (put), strike + premium (call), USD')),
    sold: Nullable(
      Type.Object({
        legs: Type.Integer(),
        contracts: Decimal('sold so far, over every user'),
        premium: Decimal('gross premium so far, USDC'),
      }),
    ),
    note: Nullable(Type.String({ description: 'why a figure is missing (e.g. no ticker cached)' })),
  },
  { title: 'CurrentCycle', description: 'the cycle a strategy sells now' },
)

export const CycleItem = Type.Object(
  {
    cycleId: Type.String({ description: '<strategy>:<instrument>' }),
    strategy: Kind,
    side: Side,
    instrument: Type.String(),
    strike: Decimal('USD'),
    expiry: Timestamp('expiry'),
    soldAt: Timestamp('first fill'),
    status: LiteralUnion(['open', 'settled']),
    legs: Type.Integer({ description: 'legs sold in the cycle (users × orders), a count only' }),
    contracts: Decimal('contracts sold, over every user'),
    premium: Decimal('gross premium, USDC'),
    fees: Decimal('exchange + platform fees, USDC'),
    settlementCost: Decimal('paid at an in-the-money expiry, USDC'),
    net: Decimal('premium − fees − settlement cost, USDC (so far while open)'),
    collateral: Decimal('USDC tied up: strike × contracts (put), index at sale × contracts (call)'),
    indexAtSale: Nullable(Decimal('index at the first fill (1m candle close), USD')),
    ivAtSale: Nullable(
      Decimal(
        "the option's mark implied volatility (a fraction) when its legs were sold, weighted by contracts; " +
          'display only; null when no leg recorded one',
      ),
    ),
    premiumYieldPct: Decimal('(premium − fees) / collateral, percent'),
    outcome: Nullable(LiteralUnion(['itm', 'otm'])),
    realisedReturnPct: Nullable(Decimal('net / collateral, percent; null while open')),
    cumulativeRealisedReturnPct: Nullable(
      Decimal('the strategy’s compounded realised return after this cycle’s expiry, percent; null while open'),
    ),
  },
  { title: 'Cycle' },
)

const WindowStats = Type.Object({
  from: Timestamp('start of the window'),
  to: Timestamp('end of the window (now)'),
  strategy: Type.Object({
    settledCycles: Type.Integer(),
    losingCycles: Type.Integer({ description: 'settled cycles whose net is below zero' }),
    realisedReturnPct: Nullable(Decimal('compounded realised return of the window, losses included')),
    annualisedReturnPct: Nullable(Decimal('realised return × 365 days / window length (simple, not compounded)')),
    hitRatio: Nullable(Decimal('settled cycles with net ≥ 0 / settled cycles')),
    otmRatio: Nullable(Decimal('settled cycles that expired out of the money / settled cycles')),
    averageLossPct: Nullable(Decimal('mean realised return of the losing cycles (negative); null when none lost')),
    maxDrawdownPct: Nullable(Decimal('largest fall of (1 + cumulative return) from its running peak')),
  }),
  hold: Nullable(
    Type.Object(
      {
        startPrice: Decimal('index at the window’s start, USD'),
        endPrice: Decimal('index at its end, USD'),
        returnPct: Decimal('holding the asset over the same window'),
        annualisedReturnPct: Nullable(Decimal('simple annualisation, like the strategy’s')),
        maxDrawdownPct: Decimal('over the start, daily and end closes'),
      },
      { description: 'holding the asset over the same window, from the stored candles; null without candles' },
    ),
  ),
})

export const StrategyItem = Type.Object(
  {
    id: Type.String({ description: 'e.g. eth-wheel' }),
    kind: Kind,
    name: Type.String(),
    description: Type.String(),
    parameters: StrategyParameters,
    currentCycle: Nullable(CurrentCycle),
    currentCycleNote: Nullable(Type.String({ description: 'why there is no current cycle' })),
    liveCycles: Type.Integer({ description: 'cycles with live legs (placing or open)' }),
    history: Type.Array(CycleItem, { description: 'newest first, at most `limit`' }),
    historyTotal: Type.Integer({ description: 'cycles in the whole history' }),
    statistics: Type.Object({
      last4Weeks: Nullable(WindowStats),
      sinceStart: Nullable(WindowStats),
    }),
  },
  { title: 'Strategy' },
)

export const StrategiesResponse = Type.Object(
  {
    asset: Type.String(),
    profile: Type.String({ description: 'TRADING_PROFILE in force (history covers every profile that ran)' }),
    asOf: Timestamp('when this answer was computed'),
    strategies: Type.Array(StrategyItem),
  },
  { $id: 'StrategiesResponse' },
)

export const WsStrategiesQuery = Type.Object(
  {
    assets: Type.Optional(
      Type.String({ maxLength: 100, description: 'comma-separated assets to start with; default: all priced assets' }),
    ),
  },
  { additionalProperties: false },
)

/** One asset's state in the /ws/strategies snapshot (read from Postgres and Redis on subscribe). */
export const StrategyStateMessage = Type.Object(
  {
    type: Type.Literal('strategy_state'),
    asset: Type.String(),
    seq: Type.Integer({ minimum: 0, description: 'the asset’s last event sequence number when the state was read' }),
    ts: Timestamp('when the state was read'),
    strategies: Type.Array(
      Type.Object({
        id: Type.String(),
        kind: Kind,
        liveCycles: Type.Integer(),
        currentCycle: Nullable(CurrentCycle),
        currentCycleNote: Nullable(Type.String()),
      }),
    ),
    signals: Type.Object({
      put: LiteralUnion(['active', 'paused']),
      call: LiteralUnion(['active', 'paused']),
    }),
  },
  { $id: 'WsStrategyState' },
)

export const StrategySnapshotMessage = Type.Object(
  {
    type: Type.Literal('snapshot'),
    channel: Type.Literal('strategies'),
    states: Type.Array(Type.Unsafe({ $ref: 'WsStrategyState#' }), {
      description: 'the state of each asset just subscribed',
    }),
  },
  { $id: 'WsStrategySnapshot' },
)
