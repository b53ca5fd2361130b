/**
 * The decisions that take four eyes (docs/operations.md "Approvals"), each as what proposals.ts
 * runs: `check` when it is proposed (the subject still waits for it), `prepare` when the last
 * approval comes (what the chain says, read outside the database transaction), and `execute` in the
 * transaction that records that approval and the outcome. Each executes through the same function a
 * single decision used (held.ts, platform-stop.ts, subaccount-stops.ts, chain-halt.ts), recorded in
 * operator_actions with the proposer as actor and the approvers in its details.
 */
import { AppError, type Clock, NotFoundError } from '@wh/core'
import type { Queryable, Sql } from '@wh/db'
import {
  type ChainClients,
  type ChainName,
  listCursors,
  OutboundMayStillMineError,
  OutboundMinedError,
  OutboundNonceTakerUnknownError,
  OutboundNotFoundError,
  OutboundNotHeldError,
  OutboundReceiptNotFinalError,
} from '@wh/wallet'
import type { Hex } from 'viem'
import { resumeChainIn, resumePoint } from './chain-halt'
import { heldEvidence, resolveHeldIn } from './held'
import { clearPlatformStopIn, openPlatformStops } from './platform-stop'
import { clearStopIn } from './subaccount-stops'

export const PROPOSAL_ACTIONS = [
  'outbound_fail',
  'outbound_mark_sent',
  'platform_stop_clear',
  'subaccount_stop_clear',
  'chain_resume',
] as const
export type ProposalAction = (typeof PROPOSAL_ACTIONS)[number]

/** What executing a proposal needs besides the database. */
export interface ActionDeps {
  readonly sql: Sql
  readonly clock: Clock
  /** read-only clients: the chain is read again before money is released */
  readonly clients: ReadonlyMap<ChainName, ChainClients>
}

/** The proposal as an action sees it. */
export interface ActionInput {
  readonly subject: string
  readonly params: Readonly<Record<string, unknown>>
  readonly reason: string
}

/** Who decided, for the operators' log: the proposer as actor, the proposal and its approvers in the details. */
export interface Decider {
  readonly reason: string
  readonly actor: string
  readonly details: Record<string, unknown>
}

interface ActionRunner {
  check(deps: ActionDeps, input: ActionInput): Promise<void>
  prepare(deps: ActionDeps, input: ActionInput): Promise<unknown>
  execute(tx: Queryable, deps: ActionDeps, input: ActionInput, prepared: unknown, d: Decider): Promise<object>
}

/** The state a proposal acts on is gone (cleared meanwhile); a class so the console's error-code reader finds each code. */
class NotWaitingError extends AppError {
  constructor(code: string, message: string) {
    super({ code, statusCode: 409, message })
  }
}

/**
 * The world refusing the action, which closes the proposal as `refused` (docs/operations.md
 * "Approvals"): the subject is not in the state the action needs (a stop or halt cleared meanwhile,
 * the transaction no longer held or gone), or the chain's evidence refuses the verdict now (mined,
 * may still be mined, the nonce's taker not shown, the receipt not final or not ours). A list of
 * classes, not of codes: every other failure (no client for the chain, the chain or the database
 * out of reach, the proposal expired meanwhile, a clear in the minute of the last one) leaves the
 * proposal open, and a later approval tries again.
 */
const STATE_REFUSALS: ReadonlyArray<abstract new (...args: never[]) => AppError> = [
  NotWaitingError,
  OutboundNotFoundError,
  OutboundNotHeldError,
  OutboundMinedError,
  OutboundMayStillMineError,
  OutboundNonceTakerUnknownError,
  OutboundReceiptNotFinalError,
]

/** Whether `e` is the world refusing the action (STATE_REFUSALS), not a failure of the setup or a passing one. */
export function isStateRefusal(e: unknown): e is AppError {
  return STATE_REFUSALS.some((refusal) => e instanceof refusal)
}

async function assertHeld(sql: Queryable, id: string): Promise<void> {
  const [row] = await sql<{ state: string }[]>`select state from outbound_txs where id = ${id}`
  if (!row) throw new NotFoundError('outbound transaction')
  if (row.state !== 'held') throw new OutboundNotHeldError(id)
}

const outboundFail: ActionRunner = {
  check: (deps, p) => assertHeld(deps.sql, p.subject),
  prepare: (deps, p) => heldEvidence(deps, p.subject, 'failed'),
  execute: async (tx, _deps, p, evidence, d) => {
    const r = await resolveHeldIn(tx, p.subject, evidence as Awaited<ReturnType<typeof heldEvidence>>, d)
    return { state: r.record.state, txHash: r.record.txHash, alreadyDone: r.alreadyDone }
  },
}

const outboundMarkSent: ActionRunner = {
  check: (deps, p) => assertHeld(deps.sql, p.subject),
  prepare: (deps, p) => heldEvidence(deps, p.subject, 'mined', p.params.txHash as Hex),
  execute: outboundFail.execute,
}

const platformStopClear: ActionRunner = {
  check: async (deps) => {
    if ((await openPlatformStops(deps.sql)).length === 0)
      throw new NotWaitingError('PLATFORM_NOT_STOPPED', 'the platform is not stopped')
  },
  prepare: async () => undefined,
  execute: async (tx, _deps, _p, _prepared, d) => {
    const cleared = await clearPlatformStopIn(tx, d)
    if (cleared === 0) throw new NotWaitingError('PLATFORM_NOT_STOPPED', 'the platform is not stopped')
    return { cleared }
  },
}

const subaccountStopClear: ActionRunner = {
  check: async (deps, p) => {
    const [row] = await deps.sql<{ stopped: boolean }[]>`
      select stopped_at is not null as stopped from subaccounts where id = ${p.subject}`
    if (!row) throw new NotFoundError('subaccount')
    if (!row.stopped) throw new NotWaitingError('SUBACCOUNT_NOT_STOPPED', 'the subaccount is not stopped')
  },
  prepare: async () => undefined,
  execute: async (tx, deps, p, _prepared, d) => {
    const r = await clearStopIn(tx, deps.clock, { subaccountRowId: p.subject, ...d })
    if (!r.cleared) throw new NotWaitingError('SUBACCOUNT_NOT_STOPPED', 'the subaccount is not stopped')
    return { cleared: true, eventId: r.eventId, idempotencyKey: r.idempotencyKey }
  },
}

const chainResume: ActionRunner = {
  check: async (deps, p) => {
    const cursor = (await listCursors(deps.sql)).find((c) => c.chain === p.subject)
    if (!cursor?.haltedAt) throw new NotWaitingError('CHAIN_NOT_HALTED', `the ${p.subject} deposit watch is not halted`)
  },
  prepare: async (deps, p) => {
    const client = deps.clients.get(p.subject as ChainName)?.publicClient
    if (!client) throw new NotFoundError(`a client for ${p.subject}`)
    const from = p.params.fromBlock === undefined ? undefined : BigInt(String(p.params.fromBlock))
    const point = await resumePoint(deps.sql, client, p.subject as ChainName, from)
    if (!point) throw new NotWaitingError('CHAIN_NOT_HALTED', `the ${p.subject} deposit watch is not halted`)
    return point
  },
  execute: async (tx, _deps, p, point, d) => {
    const resumed = await resumeChainIn(tx, point as NonNullable<Awaited<ReturnType<typeof resumePoint>>>, d)
    if (!resumed) throw new NotWaitingError('CHAIN_NOT_HALTED', `the ${p.subject} deposit watch is not halted`)
    return { chain: p.subject, resumed: true, fromBlock: (point as { fromBlock: bigint }).fromBlock.toString() }
  },
}

export const ACTION_RUNNERS: Readonly<Record<ProposalAction, ActionRunner>> = {
  outbound_fail: outboundFail,
  outbound_mark_sent: outboundMarkSent,
  platform_stop_clear: platformStopClear,
  subaccount_stop_clear: subaccountStopClear,
  chain_resume: chainResume,
}
