/**
 * Four eyes on money (docs/operations.md "Approvals"), the one owner of `operator_proposals`,
 * `operator_approvals` and `operator_proposal_outcomes`. A decision that releases money or lifts a
 * guard (proposal-actions.ts) is proposed by one operator and takes effect only when
 * `approvalsRequired` (ADMIN_APPROVALS_REQUIRED: 2 in production) different operators with the
 * approver role, the proposer not among them, approved it, before it expires (PROPOSAL_TTL_MS).
 *
 * The last approval executes it, in the same database transaction as that approval and the
 * outcome; the outcome's primary key and an advisory lock on the proposal make it happen once, so
 * approving again, or two approvers at once, change nothing more. The chain is read before that
 * transaction (a held transaction is failed or marked sent only on what the chain shows now). When
 * the state refuses the action then (the subject no longer waits, the chain shows it mined:
 * isStateRefusal in proposal-actions.ts), the proposal closes as `refused` with the reason; any other
 * failure leaves it open for a later approval. Every step is a row of its own, never rewritten; the
 * database itself refuses an approval by the proposer, by a non-approver, after expiry or after the
 * outcome (migration 0028).
 */
import { AppError, NotFoundError } from '@wh/core'
import type { Queryable, Sql } from '@wh/db'
import {
  ACTION_RUNNERS,
  type ActionDeps,
  isStateRefusal,
  PROPOSAL_ACTIONS,
  type ProposalAction,
} from './proposal-actions'

export { PROPOSAL_ACTIONS, type ProposalAction } from './proposal-actions'

/** A proposal not approved within this long expires. */
export const PROPOSAL_TTL_MS = 24 * 60 * 60_000

export type ProposalStatus = 'open' | 'expired' | 'executed' | 'refused' | 'withdrawn'

export interface Proposal {
  readonly id: string
  readonly action: ProposalAction
  readonly subject: string
  readonly params: Record<string, unknown>
  readonly reason: string
  readonly proposedBy: string
  readonly approvalsRequired: number
  readonly approvals: ReadonlyArray<{ readonly approver: string; readonly at: Date }>
  readonly createdAt: Date
  readonly expiresAt: Date
  readonly status: ProposalStatus
  readonly outcome: {
    readonly outcome: 'executed' | 'refused' | 'withdrawn'
    readonly decidedBy: string
    readonly decidedAt: Date
    readonly result: Record<string, unknown> | null
  } | null
}

export interface ProposalDeps extends ActionDeps {
  /** ADMIN_APPROVALS_REQUIRED */
  readonly approvalsRequired: number
}

/** A four-eyes refusal; a class so the console's error-code reader finds each code where it is thrown. */
class ProposalError extends AppError {
  constructor(code: string, statusCode: number, message: string, details?: Record<string, unknown>) {
    super({ code, statusCode, message, ...(details && { details }) })
  }
}

/** The database's four-eyes refusals (migration 0028), as the errors the desk answers. */
function mapped(e: unknown): unknown {
  const code = (e as { code?: string }).code
  if (code === 'WL007')
    return new ProposalError('FOUR_EYES', 403, 'a proposal is approved by someone other than its proposer')
  if (code === 'WL008') return new ProposalError('PROPOSAL_EXPIRED', 409, 'the proposal expired')
  if (code === 'WL009') return new ProposalError('PROPOSAL_DECIDED', 409, 'the proposal was already decided')
  if (code === 'WL010') return new ProposalError('NOT_ENOUGH_APPROVALS', 409, 'the proposal lacks approvals')
  if (code === 'WL011') return new ProposalError('ROLE_REQUIRED', 403, (e as Error).message)
  return e
}

interface ProposalRow {
  id: string
  action: ProposalAction
  subject: string
  params: Record<string, unknown>
  reason: string
  proposed_by: string
  approvals_required: number
  created_at: Date
  expires_at: Date
  expired: boolean
  approvals: Array<{ approver: string; at: string }>
  outcome: { outcome: 'executed' | 'refused' | 'withdrawn'; by: string; at: string; result: unknown } | null
}

const SELECT = `
  select p.id::text, p.action, p.subject, p.params, p.reason, p.proposed_by, p.approvals_required, p.created_at,
    p.expires_at, p.expires_at <= now() as expired,
    coalesce((select json_agg(json_build_object('approver', a.approver, 'at', a.approved_at) order by a.approved_at)
      from operator_approvals a where a.proposal_id = p.id), '[]'::json) as approvals,
    (select json_build_object('outcome', o.outcome, 'by', o.decided_by, 'at', o.decided_at, 'result', o.result)
      from operator_proposal_outcomes o where o.proposal_id = p.id) as outcome
  from operator_proposals p`

function toProposal(r: ProposalRow): Proposal {
  const status: ProposalStatus = r.outcome ? r.outcome.outcome : r.expired ? 'expired' : 'open'
  return {
    id: r.id,
    action: r.action,
    subject: r.subject,
    params: r.params,
    reason: r.reason,
    proposedBy: r.proposed_by,
    approvalsRequired: r.approvals_required,
    approvals: r.approvals.map((a) => ({ approver: a.approver, at: new Date(a.at) })),
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    status,
    outcome: r.outcome
      ? {
          outcome: r.outcome.outcome,
          decidedBy: r.outcome.by,
          decidedAt: new Date(r.outcome.at),
          result: (r.outcome.result ?? null) as Record<string, unknown> | null,
        }
      : null,
  }
}

/** One proposal, or undefined. */
export async function getProposal(sql: Queryable, id: string): Promise<Proposal | undefined> {
  const [row] = await sql.unsafe<ProposalRow[]>(`${SELECT} where p.id = $1`, [id])
  return row ? toProposal(row) : undefined
}

/** Proposals, newest first (at most `limit` ≤ 500); `open` only those still waiting for approvals. */
export async function listProposals(
  sql: Queryable,
  q: { open?: boolean; subject?: string; limit?: number } = {},
): Promise<Proposal[]> {
  const limit = Math.min(Math.max(q.limit ?? 100, 1), 500)
  const rows = await sql.unsafe<ProposalRow[]>(
    `${SELECT}
     where ($1::boolean is not true or (p.expires_at > now()
       and not exists (select 1 from operator_proposal_outcomes o where o.proposal_id = p.id)))
       and ($2::text is null or p.subject = $2)
     order by p.created_at desc, p.id desc limit $3`,
    [q.open ?? false, q.subject ?? null, limit],
  )
  return rows.map(toProposal)
}

/**
 * Proposes `action` on `subject`, after checking the subject waits for it (409 when not). An open
 * proposal of the same action on the same subject is returned instead of a second one
 * (`existing: true`), also to a second proposer at the same moment (a lock on the action and
 * subject). The proposer must be an enabled operator of role operator or approver.
 *
 * @example
 *   const { proposal } = await propose(deps, { action: 'platform_stop_clear', subject: 'platform', reason, proposedBy: 'alice' })
 */
export async function propose(
  deps: ProposalDeps,
  p: { action: ProposalAction; subject: string; params?: Record<string, unknown>; reason: string; proposedBy: string },
): Promise<{ proposal: Proposal; existing: boolean }> {
  if (!(PROPOSAL_ACTIONS as readonly string[]).includes(p.action))
    throw new ProposalError('UNKNOWN_ACTION', 400, `no such action: ${p.action}`)
  const reason = p.reason.trim()
  if (reason.length === 0 || reason.length > 500)
    throw new ProposalError('INVALID_REASON', 400, 'a reason of 1 to 500 characters')
  const params = p.params ?? {}
  await ACTION_RUNNERS[p.action].check(deps, { subject: p.subject, params, reason })
  try {
    return await deps.sql.begin(async (tx) => {
      // one proposer at a time per action and subject: of two at once, the second finds the first's
      // proposal. The lock is the rule: "open" (not expired, no outcome) depends on the time and on
      // another table, so no unique index can say it.
      await tx`select pg_advisory_xact_lock(hashtextextended(${`${p.action}:${p.subject}`}, 7243100040))`
      const [open] = await tx.unsafe<ProposalRow[]>(
        `${SELECT}
         where p.action = $1 and p.subject = $2 and p.expires_at > now()
           and not exists (select 1 from operator_proposal_outcomes o where o.proposal_id = p.id)
         order by p.created_at desc, p.id desc limit 1`,
        [p.action, p.subject],
      )
      if (open) return { proposal: toProposal(open), existing: true }
      const [row] = await tx<{ id: string }[]>`
        insert into operator_proposals (action, subject, params, reason, proposed_by, approvals_required, expires_at)
        values (${p.action}, ${p.subject}, ${tx.json(params as never)}, ${reason}, ${p.proposedBy},
          ${deps.approvalsRequired}, now() + make_interval(secs => ${PROPOSAL_TTL_MS / 1000}))
        returning id::text`
      return { proposal: (await getProposal(tx, (row as { id: string }).id)) as Proposal, existing: false }
    })
  } catch (e) {
    throw mapped(e)
  }
}

export interface ApprovalResult {
  readonly proposal: Proposal
  /** this approval executed the proposal */
  readonly executed: boolean
  /** this approver had approved before, or the proposal was executed already: nothing changed */
  readonly alreadyDone: boolean
}

/** The proposal, 404 when none; a decided or expired one is refused unless `approver` was part of it. */
async function approvable(sql: Queryable, id: string, approver: string): Promise<Proposal | ApprovalResult> {
  const p = await getProposal(sql, id)
  if (!p) throw new NotFoundError('proposal')
  const approvedBefore = p.approvals.some((a) => a.approver === approver)
  if (p.outcome) {
    if (approvedBefore && p.outcome.outcome === 'executed') return { proposal: p, executed: false, alreadyDone: true }
    throw new ProposalError('PROPOSAL_DECIDED', 409, `the proposal was ${p.outcome.outcome}`, {
      outcome: p.outcome.outcome,
    })
  }
  if (p.status === 'expired') throw new ProposalError('PROPOSAL_EXPIRED', 409, 'the proposal expired')
  if (p.proposedBy === approver)
    throw new ProposalError('FOUR_EYES', 403, 'a proposal is approved by someone other than its proposer')
  if (approvedBefore) return { proposal: p, executed: false, alreadyDone: true }
  return p
}

/**
 * `approver` approves proposal `id`; the approval that reaches `approvalsRequired` executes it (see
 * the file comment). A refusal by the state at execution (isStateRefusal) closes the proposal as
 * `refused` and is thrown (409 with the action's code); any other failure (the chain or the database
 * out of reach, no client for the chain, expired meanwhile) records nothing and leaves it open.
 */
export async function approve(deps: ProposalDeps, id: string, approver: string): Promise<ApprovalResult> {
  const found = await approvable(deps.sql, id, approver)
  if ('executed' in found) return found
  const p = found
  try {
    if (p.approvals.length + 1 < p.approvalsRequired) {
      // counted under the proposal's lock: of two approvals at once that complete the set, the second executes
      // (each read the other's absence before it; without the count neither would, and the proposal would expire)
      const approvals = await deps.sql.begin(async (tx) => {
        await lockProposal(tx, id)
        await tx`insert into operator_approvals (proposal_id, approver) values (${id}, ${approver}) on conflict do nothing`
        return (await approversOf(tx, id)).length
      })
      if (approvals < p.approvalsRequired)
        return { proposal: (await getProposal(deps.sql, id)) as Proposal, executed: false, alreadyDone: false }
    }
    const runner = ACTION_RUNNERS[p.action]
    const prepared = await runner.prepare(deps, p)
    const executed = await deps.sql.begin(async (tx) => {
      // one execution at a time per proposal; each statement below sees what the previous holder committed
      await lockProposal(tx, id)
      const [decided] = await tx`select 1 from operator_proposal_outcomes where proposal_id = ${id}`
      if (decided) return false
      await tx`insert into operator_approvals (proposal_id, approver) values (${id}, ${approver}) on conflict do nothing`
      const approvers = await approversOf(tx, id)
      const result = await runner.execute(tx, deps, p, prepared, {
        reason: p.reason,
        actor: p.proposedBy,
        details: { proposalId: id, approvedBy: approvers },
      })
      await tx`insert into operator_proposal_outcomes (proposal_id, outcome, decided_by, result)
        values (${id}, 'executed', ${approver}, ${tx.json(result as never)})`
      return true
    })
    return { proposal: (await getProposal(deps.sql, id)) as Proposal, executed, alreadyDone: !executed }
  } catch (e) {
    const err = mapped(e)
    // only the world's refusal closes it; a failure of the setup or a passing one leaves it open for a later approval
    if (isStateRefusal(err)) await closeAsRefused(deps.sql, id, approver, err)
    throw err
  }
}

/** One approval or execution at a time per proposal (a transaction-scoped lock). */
async function lockProposal(tx: Queryable, id: string): Promise<void> {
  await tx`select pg_advisory_xact_lock(hashtextextended(${id}::text, 7243100028))`
}

/** The proposal's approvers, in the order they approved. */
async function approversOf(tx: Queryable, id: string): Promise<string[]> {
  const rows = await tx<{ approver: string }[]>`
    select approver from operator_approvals where proposal_id = ${id} order by approved_at, approver`
  return rows.map((r) => r.approver)
}

/** The state refused the action: the approval and the refusal recorded, the proposal closed. */
async function closeAsRefused(sql: Sql, id: string, approver: string, err: AppError): Promise<void> {
  try {
    await sql.begin(async (tx) => {
      await tx`insert into operator_approvals (proposal_id, approver) values (${id}, ${approver}) on conflict do nothing`
      await tx`insert into operator_proposal_outcomes (proposal_id, outcome, decided_by, result)
        values (${id}, 'refused', ${approver}, ${tx.json({ code: err.code, message: err.message } as never)})`
    })
  } catch {
    // decided meanwhile (or expired): that outcome stands
  }
}

/**
 * Withdraws an open proposal: its proposer, or an approver rejecting it. Recorded as the outcome
 * `withdrawn` with who; a decided or expired proposal is refused (409).
 */
export async function withdrawProposal(
  sql: Sql,
  id: string,
  by: { name: string; approver: boolean },
  reason: string,
): Promise<Proposal> {
  const p = await getProposal(sql, id)
  if (!p) throw new NotFoundError('proposal')
  if (p.status !== 'open') throw new ProposalError('PROPOSAL_DECIDED', 409, `the proposal is ${p.status}`)
  if (p.proposedBy !== by.name && !by.approver)
    throw new ProposalError('ROLE_REQUIRED', 403, 'a proposal is withdrawn by its proposer or rejected by an approver')
  try {
    await sql`insert into operator_proposal_outcomes (proposal_id, outcome, decided_by, result)
      values (${id}, 'withdrawn', ${by.name}, ${sql.json({ reason: reason.slice(0, 500) } as never)})`
  } catch (e) {
    if ((e as { code?: string }).code === '23505') throw new ProposalError('PROPOSAL_DECIDED', 409, 'decided meanwhile')
    throw mapped(e)
  }
  return (await getProposal(sql, id)) as Proposal
}
