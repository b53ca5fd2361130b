/** TypeBox schemas of the positions controller (spec 4.2; docs/trading.md). */
import { UNDERLYINGS } from '@wh/core'
import { POSITION_STATES } from '@wh/trading'
import Type from 'typebox'
import { LiteralUnion } from './literals'
import { FeeWarning } from './quotes'
import { LegSettings, WheelSettings, WheelSettingsInput } from './wheels'

export const PAGE_LIMIT_MAX = 100
export const PAGE_LIMIT_DEFAULT = 20

const Timestamp = Type.String({ format: 'date-time' })
const Nullable = <T extends Type.TSchema>(t: T) => Type.Union([t, Type.Null()])
const Amount = (description: string) => Type.String({ pattern: '^-?[0-9]+(\\.[0-9]+)?$', description })

export const Asset = LiteralUnion(UNDERLYINGS, { description: 'the underlying' })
export const Side = LiteralUnion(['put', 'call'], {
  description: 'put: cash-secured by USDC; call: covered by the underlying',
})
export const State = LiteralUnion(POSITION_STATES, { description: 'docs/trading.md "Position states"' })

export const CreatePositionBody = Type.Object(
  {
    asset: Asset,
    side: LiteralUnion(['put', 'call', 'wheel'], {
      description:
        'put: a cash-secured put; call: a covered call; wheel: start the wheel on the asset with `amount` USDC ' +
        '(its first leg is a put; the runner opens each next leg)',
    }),
    amount: Type.String({
      pattern: '^[0-9]{1,40}(\\.[0-9]{1,18})?$',
      description: 'collateral to commit, a decimal string: USDC for a put or a wheel, the underlying for a call',
    }),
    settings: Type.Optional(WheelSettingsInput),
  },
  { additionalProperties: false },
)
export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 128, pattern: '^[\\x21-\\x7e]+$' })),
})

export const CreatedPosition = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    state: State,
    asset: Asset,
    side: Side,
    collateralCurrency: Type.String(),
    collateral: Amount('collateral committed'),
    funded: Amount('the part moved from the free balance into the subaccount (the rest was already there)'),
    wheelId: Type.Optional(Type.String({ format: 'uuid', description: 'set when this is the first leg of a wheel' })),
    warning: Type.Optional(FeeWarning),
  },
  { title: 'CreatedPosition' },
)

export const PositionItem = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    wheelId: Nullable(Type.String({ format: 'uuid', description: 'the wheel that opened this leg' })),
    asset: Type.String(),
    side: Side,
    state: State,
    collateralCurrency: Type.String(),
    collateral: Amount('collateral committed'),
    instrument: Nullable(Type.String({ description: 'the option sold, once chosen' })),
    strike: Nullable(Amount('strike price in USD')),
    expiry: Nullable(Timestamp),
    windowEndsAt: Nullable(
      Type.String({
        format: 'date-time',
        description: 'while placing: when the maker window ends (the rest is then cancelled or crossed)',
      }),
    ),
    size: Nullable(Amount('contracts to sell, in the underlying')),
    filled: Amount('contracts sold so far'),
    premium: Amount('premium received, USDC, before fees'),
    fees: Amount('exchange and platform fees, USDC'),
    exchangeFees: Amount("the exchange's part of `fees` (its sales and buy-backs), USDC"),
    platformFee: Amount("the platform's part of `fees`, USDC"),
    settlementCost: Nullable(Amount('paid at an in-the-money expiry, USDC')),
    outcome: Nullable(LiteralUnion(['itm', 'otm'])),
    bought: Amount('contracts bought back so far (DELETE of an open leg)'),
    closeCost: Amount('what buying back cost, USDC: price × contracts, fees apart (they are in `fees`)'),
    closeLimit: Nullable(
      Amount('while closing: the highest price per contract the buy-back pays (the quote plus its tolerance), USD'),
    ),
    realizedPnl: Amount('the net: premium − fees − settlement cost − close cost, USDC'),
    fills: Type.Integer({ description: 'number of fills' }),
    cancelRequested: Type.Boolean(),
    reason: Nullable(Type.String({ description: 'why it waits, failed or was cancelled' })),
    legSettings: Nullable(LegSettings),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    closedAt: Nullable(Timestamp),
  },
  { title: 'Position' },
)

export const ListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: PAGE_LIMIT_MAX, default: PAGE_LIMIT_DEFAULT })),
    cursor: Type.Optional(Type.String({ maxLength: 200, description: 'nextCursor of the previous page' })),
    state: Type.Optional(State),
  },
  { additionalProperties: false },
)
export const WheelItem = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    asset: Type.String(),
    state: LiteralUnion(['running', 'stopping', 'stopped']),
    stopMode: Nullable(LiteralUnion(['after_cycle', 'now'])),
    cycles: Type.Integer({ description: 'legs opened so far' }),
    currentPositionId: Nullable(Type.String({ format: 'uuid' })),
    reason: Nullable(Type.String({ description: 'why the runner skipped it last' })),
    settings: WheelSettings,
    createdAt: Timestamp,
    stoppedAt: Nullable(Timestamp),
  },
  { title: 'Wheel' },
)

export const ListResponse = Type.Object({
  wheels: Type.Array(WheelItem, {
    description: "the caller's wheels that are not stopped, and stopped ones of the page",
  }),
  positions: Type.Array(PositionItem, { description: 'newest first' }),
  nextCursor: Nullable(Type.String()),
})

export const PositionParams = Type.Object({ id: Type.String({ format: 'uuid' }) })
export const CancelQuery = Type.Object(
  {
    mode: Type.Optional(
      LiteralUnion(['after_cycle', 'now'], {
        description:
          'for a wheel: stop after the current leg (default) or now (its resting orders cancelled, or its sold leg bought back at a quoted cost)',
      }),
    ),
  },
  { additionalProperties: false },
)
export const CloseQuote = Type.Object(
  {
    pricePerUnit: Amount('the quoted price per contract: the best ask, or the mark plus a margin without one, USD'),
    amount: Amount('contracts to buy back: sold minus already bought back'),
    cost: Amount('pricePerUnit × amount, USDC, rounded up; the exchange fee comes on top'),
    limitPerUnit: Amount('the most the buy order pays per contract: the quote plus 2 %, USD'),
    quotedAt: Timestamp,
  },
  { title: 'CloseQuote' },
)
export const CancelResponse = Type.Object({
  id: Type.String({ format: 'uuid' }),
  action: LiteralUnion(['cancel', 'close', 'stop'], {
    description:
      'cancel: a leg not sold yet; close: a sold (open) leg is bought back (202, with `quote`); stop: a wheel ' +
      '(with `quote` when `mode=now` buys its sold leg back)',
  }),
  outcome: Type.Union(
    [
      Type.Literal('cancelled'),
      Type.Literal('cancel_requested'),
      Type.Literal('close_requested'),
      Type.Literal('stopping'),
      Type.Literal('stopped'),
    ],
    {
      description:
        'cancelled: nothing was at the exchange; cancel_requested: resting orders are being cancelled, what ' +
        'filled stays open; close_requested: the placing tick sends one immediate-or-cancel buy at the limit ' +
        '(closed when all is bought back, else back to open with the reason; a second DELETE while closing ' +
        'answers the same quote); stopping/stopped: a wheel, reported stopped once no leg is live and no order ' +
        'of it rests',
    },
  ),
  state: Type.String({ description: "the position's state, or the wheel's" }),
  quote: Type.Optional(CloseQuote),
  wheel: Type.Optional(
    Type.Object(
      {
        id: Type.String({ format: 'uuid' }),
        state: LiteralUnion(['stopping', 'stopped']),
      },
      {
        description:
          "cancelling a wheel's live leg stops the wheel: stopped at once when nothing of it reached the exchange, " +
          'else stopping until no order of it rests (docs/trading.md "Cancelling a wheel\'s leg")',
      },
    ),
  ),
})
