/** The operator's desk (apps/api/src/admin): request and response shapes. */

import Type from 'typebox'
import { LiteralUnion } from './literals'

const Iso = Type.String({ format: 'date-time' })
const Uuid = Type.String({ format: 'uuid' })

const Reason = Type.String({ minLength: 1, maxLength: 500, description: 'why (the evidence looked at, recorded)' })

/**
 * Why a decision is taken, recorded in operator_actions with the signed-in operator (who is never a
 * field of the body: a body naming an `operator` is refused).
 */
export const Decision = Type.Object({ reason: Reason }, { additionalProperties: false })

/** Marking a held transaction sent: which of its signed versions the chain shows mined. */
export const MarkSentBody = Type.Object(
  {
    reason: Reason,
    txHash: Type.String({
      pattern: '^0x[0-9a-fA-F]{64}$',
      description: 'the mined version: one of its signed versions',
    }),
  },
  { additionalProperties: false },
)

/** Signing in to the desk (ADMIN_AUTH=password). */
export const SignInBody = Type.Object(
  {
    operator: Type.String({ minLength: 2, maxLength: 64, description: 'the operator’s name' }),
    password: Type.String({ minLength: 1, maxLength: 256 }),
  },
  { additionalProperties: false },
)
export const OperatorView = Type.Object(
  {
    name: Type.String(),
    role: LiteralUnion(['viewer', 'operator', 'approver']),
  },
  { title: 'Operator' },
)
export const SessionView = Type.Object({
  operator: OperatorView,
  token: Type.String({ description: 'send as `Authorization: Bearer <token>` (also set as an HttpOnly cookie)' }),
  expiresAt: Iso,
})
export const Me = Type.Object({ operator: OperatorView, auth: LiteralUnion(['password', 'proxy']) })

export const ProposalView = Type.Object(
  {
    id: Uuid,
    action: LiteralUnion([
      'outbound_fail',
      'outbound_mark_sent',
      'platform_stop_clear',
      'subaccount_stop_clear',
      'chain_resume',
    ]),
    subject: Type.String(),
    params: Type.Record(Type.String(), Type.Unknown()),
    reason: Type.String(),
    proposedBy: Type.String(),
    approvalsRequired: Type.Integer(),
    approvals: Type.Array(Type.Object({ approver: Type.String(), at: Iso })),
    createdAt: Iso,
    expiresAt: Iso,
    status: LiteralUnion(['open', 'expired', 'executed', 'refused', 'withdrawn']),
    outcome: Type.Union([
      Type.Object({
        outcome: LiteralUnion(['executed', 'refused', 'withdrawn']),
        decidedBy: Type.String(),
        decidedAt: Iso,
        result: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
      }),
      Type.Null(),
    ]),
  },
  { title: 'Proposal' },
)
/** A decision that takes four eyes, proposed: it waits for approvals (or an open one was found). */
export const Proposed = Type.Object({
  proposal: ProposalView,
  existing: Type.Boolean({ description: 'an open proposal of this action on this subject was there already' }),
})
export const ProposalList = Type.Object({ items: Type.Array(ProposalView) })
export const ProposalsQuery = Type.Object(
  {
    status: Type.Optional(LiteralUnion(['open', 'all'], { default: 'open' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
  },
  { additionalProperties: false },
)
export const Approved = Type.Object({
  proposal: ProposalView,
  executed: Type.Boolean({ description: 'this approval was the last one needed: the decision took effect' }),
  alreadyDone: Type.Boolean(),
})

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
  verdict: LiteralUnion(['recheck']),
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
    reason: Reason,
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
  /** withdrawals and deposits held with a transaction (their reserve kept), waiting on a decision */
  heldWithdrawals: Type.Integer(),
  heldDeposits: Type.Integer(),
  /** proposals waiting for approvals */
  openProposals: Type.Integer(),
  /** balance rows that differ from their postings at the last check (docs/solvency.md) */
  balanceDifferences: Type.Union([Type.Integer(), Type.Null()], { description: 'null: no check has run yet' }),
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
export const BalanceCheckView = Type.Object(
  {
    id: Type.Integer(),
    kind: LiteralUnion(['full', 'incremental']),
    startedAt: Iso,
    durationMs: Type.Integer(),
    events: Type.Integer({ description: 'events whose postings it summed' }),
    accounts: Type.Integer({ description: '(account, currency) pairs with a balance' }),
    differenceCount: Type.Integer(),
    differences: Type.Array(
      Type.Object({ account: Type.String(), currency: Type.String(), balance: BaseUnits, postings: BaseUnits }),
    ),
  },
  { title: 'BalanceCheck' },
)
export const SolvencyView = Type.Object({
  balanceCheck: Type.Union([BalanceCheckView, Type.Null()], {
    description: 'the last check of the balance rows against their postings',
  }),
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

/**
 * A job of the worker for a row (docs/architecture.md "Accepted work: one job per 202"): where it
 * is in Bull Board, and its state there (`unknown`: no such job, never added or already removed).
 */
export const JobLink = Type.Object(
  {
    name: Type.String({ description: 'the job name, e.g. withdrawal.send, position.advance, deposit-sweep' }),
    queue: Type.String({ description: 'the BullMQ queue (Redis name)' }),
    jobId: Type.String(),
    path: Type.String({ description: "the job's page in Bull Board, on the API's listener (BULL_BOARD_ENABLED)" }),
    state: Type.Union([
      LiteralUnion([
        'waiting',
        'active',
        'delayed',
        'completed',
        'failed',
        'prioritized',
        'waiting-children',
        'unknown',
      ]),
      Type.Null(),
    ]),
  },
  { title: 'JobLink' },
)

export const DeskWithdrawal = Type.Object(
  {
    id: Uuid,
    userId: Uuid,
    state: Type.String(),
    chain: Type.Union([Type.String(), Type.Null()]),
    currency: Type.String(),
    amount: Type.String({ description: 'base units' }),
    txHash: Type.Union([Type.String(), Type.Null()]),
    lastErrorCode: Type.Union([Type.String(), Type.Null()]),
    heldAt: Type.Union([Iso, Type.Null()]),
    createdAt: Iso,
    jobs: Type.Array(JobLink),
  },
  { title: 'DeskWithdrawal' },
)

export const DeskPosition = Type.Object(
  {
    id: Uuid,
    userId: Uuid,
    state: Type.String(),
    asset: Type.String(),
    side: Type.String(),
    wheelId: Type.Union([Uuid, Type.Null()]),
    reason: Type.Union([Type.String(), Type.Null()]),
    createdAt: Iso,
    jobs: Type.Array(JobLink),
  },
  { title: 'DeskPosition' },
)

export const DeskDeposit = Type.Object(
  {
    id: Uuid,
    userId: Uuid,
    state: Type.String(),
    chain: Type.String(),
    token: Type.String(),
    amount: Type.String({ description: 'base units' }),
    lastErrorCode: Type.Union([Type.String(), Type.Null()]),
    heldAt: Type.Union([Iso, Type.Null()]),
    createdAt: Iso,
    jobs: Type.Array(JobLink),
  },
  { title: 'DeskDeposit' },
)
