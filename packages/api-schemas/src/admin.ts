/** The operator's desk (apps/api/src/admin): request and response shapes. */

import Type from 'typebox'
import { LiteralUnion } from './literals'

const Iso = Type.String({ format: 'date-time' })
const Uuid = Type.String({ format: 'uuid' })

/** Who takes a decision and why: both recorded in operator_actions. */
export const Decision = Type.Object(
  {
    operator: Type.String({ minLength: 1, maxLength: 100, description: 'who decides (a name, recorded)' }),
    reason: Type.String({ minLength: 1, maxLength: 500, description: 'why (the evidence looked at, recorded)' }),
  },
  { additionalProperties: false },
)

export const IdParams = Type.Object({ id: Uuid }, { additionalProperties: false })

export const HeldTransaction = Type.Object(
  {
    id: Uuid,
    chain: Type.String(),
    purpose: Type.String(),
    refId: Type.String(),
    nonce: Type.String(),
    txHash: Type.String(),
    contradictions: Type.Integer(),
    holdReason: Type.Union([Type.String(), Type.Null()]),
    updatedAt: Iso,
  },
  { title: 'HeldTransaction' },
)
export const HeldList = Type.Object({ items: Type.Array(HeldTransaction) })

export const HeldDecision = Type.Object({
  id: Uuid,
  verdict: LiteralUnion(['recheck', 'failed']),
  state: Type.String(),
  txHash: Type.String(),
  /** true: this decision had already been taken (the command is idempotent) */
  alreadyDone: Type.Boolean(),
})

export const ChainCursor = Type.Object(
  {
    chain: Type.String(),
    nextBlock: Type.String(),
    blockHash: Type.Union([Type.String(), Type.Null()]),
    haltedAt: Type.Union([Iso, Type.Null()]),
    haltReason: Type.Union([Type.String(), Type.Null()]),
  },
  { title: 'ChainCursor' },
)
export const ChainList = Type.Object({ items: Type.Array(ChainCursor) })
export const ChainParams = Type.Object(
  {
    chain: LiteralUnion(['ethereum', 'optimism', 'base', 'arbitrum']),
  },
  { additionalProperties: false },
)
export const ResumeBody = Type.Object(
  {
    operator: Decision.properties.operator,
    reason: Decision.properties.reason,
    fromBlock: Type.Optional(Type.String({ pattern: '^[0-9]{1,20}$', description: 'scan again from this block' })),
  },
  { additionalProperties: false },
)
export const ResumeResult = Type.Object({ chain: Type.String(), resumed: Type.Boolean(), alreadyDone: Type.Boolean() })

export const StoppedSubaccount = Type.Object(
  {
    id: Uuid,
    userId: Uuid,
    exchangeId: Type.Union([Type.String(), Type.Null()]),
    asset: Type.String(),
    stoppedAt: Iso,
    stopReason: Type.Union([Type.String(), Type.Null()]),
  },
  { title: 'StoppedSubaccount' },
)
export const StoppedList = Type.Object({ items: Type.Array(StoppedSubaccount) })
export const ClearStopResult = Type.Object({ id: Uuid, cleared: Type.Boolean(), alreadyDone: Type.Boolean() })

export const OperatorAction = Type.Object(
  {
    id: Uuid,
    action: Type.String(),
    subject: Type.String(),
    actor: Type.String(),
    reason: Type.String(),
    details: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
    at: Iso,
  },
  { title: 'OperatorAction' },
)
export const ActionsQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
    subject: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false },
)
export const ActionList = Type.Object({ items: Type.Array(OperatorAction) })

export const Overview = Type.Object({
  heldTransactions: Type.Integer(),
  haltedChains: Type.Array(Type.String()),
  stoppedSubaccounts: Type.Integer(),
  /** an open platform stop (docs/solvency.md "The platform stop") */
  platformStopped: Type.Boolean(),
  /** currencies with an open solvency deficit */
  deficits: Type.Array(Type.String()),
  lastAction: Type.Union([OperatorAction, Type.Null()]),
})

const BaseUnits = Type.String({ pattern: '^-?[0-9]{1,78}$', description: 'base units of the currency' })

export const SolvencyLeg = Type.Object(
  {
    side: LiteralUnion(['asset', 'liability']),
    currency: Type.String(),
    kind: Type.String({ description: 'platform_wallet, deposit_addresses, exchange_subaccounts, user_transit, …' }),
    place: Type.String({ description: 'where: `base:hot:0x…`, `exchange:wallet`, `journal`, …' }),
    amount: BaseUnits,
    account: Type.Optional(
      Type.String({ description: "the platform's address or exchange account read (GET /solvency publishes it)" }),
    ),
  },
  { title: 'SolvencyLeg' },
)
export const SolvencyTotal = Type.Object({
  currency: Type.String(),
  assets: BaseUnits,
  liabilities: BaseUnits,
  surplus: Type.String({ pattern: '^-?[0-9]{1,78}$', description: 'assets − liabilities; negative is a deficit' }),
})
export const PlaceSurplus = Type.Object({
  currency: Type.String(),
  place: Type.String(),
  held: BaseUnits,
  expected: BaseUnits,
  amount: BaseUnits,
})
export const SolvencyRun = Type.Object(
  {
    id: Uuid,
    startedAt: Iso,
    finishedAt: Iso,
    complete: Type.Boolean({ description: 'every leg was read; an incomplete run decides nothing' }),
    totals: Type.Array(SolvencyTotal),
    legs: Type.Array(SolvencyLeg),
    surpluses: Type.Array(PlaceSurplus),
    errors: Type.Array(Type.Object({ place: Type.String(), error: Type.String() })),
  },
  { title: 'SolvencyRun' },
)
export const DeficitEpisode = Type.Object(
  {
    currency: Type.String(),
    openedAt: Iso,
    openedRunId: Uuid,
    worst: BaseUnits,
  },
  { title: 'DeficitEpisode' },
)
export const PlatformStopView = Type.Object(
  {
    id: Uuid,
    raisedAt: Iso,
    raisedBy: LiteralUnion(['solvency', 'operator']),
    reason: Type.String(),
  },
  { title: 'PlatformStop' },
)
export const SolvencyView = Type.Object({
  latest: Type.Union([SolvencyRun, Type.Null()], { description: 'the newest run, complete or not' }),
  lastComplete: Type.Union([Iso, Type.Null()], { description: 'when the newest complete run finished' }),
  deficits: Type.Array(DeficitEpisode, { description: 'open deficit episodes' }),
  stops: Type.Array(PlatformStopView, { description: 'open platform stops; empty while the platform runs' }),
})
export const SolvencyHistoryQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
    before: Type.Optional(Iso),
  },
  { additionalProperties: false },
)
export const SolvencyHistory = Type.Object({
  items: Type.Array(
    Type.Object({ id: Uuid, finishedAt: Iso, complete: Type.Boolean(), totals: Type.Array(SolvencyTotal) }),
  ),
})
export const PlatformStopResult = Type.Object({
  stopped: Type.Boolean({ description: 'whether a stop is open after the decision' }),
  alreadyDone: Type.Boolean(),
})
