/** TypeBox schemas of GET /wheels/{id}/decisions (docs/trading.md "Why: the decision log"). */
import { DECISION_KINDS, DECISION_REASONS } from '@wh/trading'
import Type from 'typebox'
import { LiteralUnion } from './literals'

export const PAGE_LIMIT_MAX = 100
export const PAGE_LIMIT_DEFAULT = 20

const Nullable = <T extends Type.TSchema>(t: T) => Type.Union([t, Type.Null()])
const Decimal = (description: string) => Type.String({ pattern: '^-?[0-9]+(\\.[0-9]+)?$', description })
const Timestamp = Type.String({ format: 'date-time' })

export const DecisionKind = LiteralUnion(DECISION_KINDS, { description: 'what was decided' })
export const DecisionReason = LiteralUnion(DECISION_REASONS, { description: 'why, as a code' })

export const ExpiryCandidate = Type.Object(
  {
    expiry: Timestamp,
    tenorHours: Type.Number({ description: 'hours from the decision to the expiry' }),
    inWindow: Type.Boolean({ description: "inside the profile's tenor window" }),
  },
  { title: 'DecisionExpiryCandidate' },
)

export const ExpiryFacts = Type.Object(
  {
    candidates: Type.Array(ExpiryCandidate, { description: 'every future expiry listed, nearest first' }),
    chosen: Nullable(Timestamp),
    minTenorHours: Type.Number(),
    maxTenorDays: Type.Number(),
  },
  { title: 'DecisionExpiries' },
)

export const StrikeCandidate = Type.Object(
  {
    instrument: Type.String(),
    strike: Decimal('USD'),
    deltaBps: Type.Integer({ description: 'delta in basis points, signed as the exchange gives it (puts negative)' }),
    mark: Decimal('USD per contract'),
    annualisedYieldBps: Nullable(Type.Integer({ description: "the mark's annualised yield on the collateral" })),
    excluded: Nullable(
      LiteralUnion(['no_mark', 'below_cost_basis', 'outside_delta_tolerance'], {
        description: 'why it was not eligible; null when it was',
      }),
    ),
  },
  { title: 'DecisionStrikeCandidate' },
)

export const StrikeFacts = Type.Object(
  {
    side: LiteralUnion(['put', 'call']),
    targetDeltaBps: Type.Integer(),
    toleranceBps: Type.Integer(),
    minStrike: Nullable(Decimal("a call's floor: the wheel's cost basis")),
    candidates: Type.Array(StrikeCandidate, { description: 'the options of the side at the chosen expiry, by strike' }),
    chosen: Nullable(Type.String({ description: 'the chosen instrument' })),
  },
  { title: 'DecisionStrikes' },
)

export const DecisionFacts = Type.Object(
  {
    expiries: Type.Optional(ExpiryFacts),
    strikes: Type.Optional(StrikeFacts),
    yield: Type.Optional(
      Type.Object({ instrument: Type.String(), annualisedYieldBps: Type.Integer(), floorBps: Type.Integer() }),
    ),
    leg: Type.Optional(
      Type.Object({ side: LiteralUnion(['put', 'call']), amount: Decimal('collateral'), currency: Type.String() }),
    ),
    conversion: Type.Optional(
      Type.Object({
        direction: LiteralUnion(['to_underlying', 'to_cash']),
        trigger: LiteralUnion(['pre_expiry', 'after_settlement']),
        sold: Type.Optional(Type.String({ description: 'amount and currency' })),
        bought: Type.Optional(Type.String({ description: 'amount and currency' })),
        costBasis: Type.Optional(Nullable(Decimal('USD per unit'))),
      }),
    ),
    detail: Type.Optional(Type.String()),
  },
  { title: 'DecisionFacts', description: 'what the decision looked at: the candidates considered and the one chosen' },
)

export const WheelDecision = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    at: Timestamp,
    kind: DecisionKind,
    reason: DecisionReason,
    positionId: Nullable(Type.String({ format: 'uuid', description: 'the leg it is about' })),
    facts: DecisionFacts,
    message: Type.String({ description: 'a one-line explanation' }),
  },
  { title: 'WheelDecision' },
)

export const DecisionsParams = Type.Object({ id: Type.String({ format: 'uuid', description: 'the wheel' }) })
export const DecisionsQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: PAGE_LIMIT_MAX, default: PAGE_LIMIT_DEFAULT })),
    cursor: Type.Optional(Type.String({ maxLength: 200, description: 'nextCursor of the previous page' })),
  },
  { additionalProperties: false },
)
export const DecisionsPage = Type.Object(
  {
    decisions: Type.Array(WheelDecision, { description: 'newest first' }),
    nextCursor: Nullable(Type.String()),
  },
  { title: 'WheelDecisionsPage' },
)
