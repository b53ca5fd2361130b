/** The operator's desk (apps/api/src/admin): request and response shapes. */
import Type from 'typebox'

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

export const HeldTransaction = Type.Object({
  id: Uuid,
  chain: Type.String(),
  purpose: Type.String(),
  refId: Type.String(),
  nonce: Type.String(),
  txHash: Type.String(),
  contradictions: Type.Integer(),
  holdReason: Type.Union([Type.String(), Type.Null()]),
  updatedAt: Iso,
})
export const HeldList = Type.Object({ items: Type.Array(HeldTransaction) })

export const HeldDecision = Type.Object({
  id: Uuid,
  verdict: Type.Union([Type.Literal('recheck'), Type.Literal('failed')]),
  state: Type.String(),
  txHash: Type.String(),
  /** true: this decision had already been taken (the command is idempotent) */
  alreadyDone: Type.Boolean(),
})

export const ChainCursor = Type.Object({
  chain: Type.String(),
  nextBlock: Type.String(),
  blockHash: Type.Union([Type.String(), Type.Null()]),
  haltedAt: Type.Union([Iso, Type.Null()]),
  haltReason: Type.Union([Type.String(), Type.Null()]),
})
export const ChainList = Type.Object({ items: Type.Array(ChainCursor) })
export const ChainParams = Type.Object(
  {
    chain: Type.Union([
      Type.Literal('ethereum'),
      Type.Literal('optimism'),
      Type.Literal('base'),
      Type.Literal('arbitrum'),
    ]),
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

export const StoppedSubaccount = Type.Object({
  id: Uuid,
  userId: Uuid,
  exchangeId: Type.Union([Type.String(), Type.Null()]),
  asset: Type.String(),
  stoppedAt: Iso,
  stopReason: Type.Union([Type.String(), Type.Null()]),
})
export const StoppedList = Type.Object({ items: Type.Array(StoppedSubaccount) })
export const ClearStopResult = Type.Object({ id: Uuid, cleared: Type.Boolean(), alreadyDone: Type.Boolean() })

export const OperatorAction = Type.Object({
  id: Uuid,
  action: Type.String(),
  subject: Type.String(),
  actor: Type.String(),
  reason: Type.String(),
  details: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
  at: Iso,
})
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
  lastAction: Type.Union([OperatorAction, Type.Null()]),
})
