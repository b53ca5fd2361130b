/**
 * Proposals on the desk (docs/operations.md "Approvals"): listed and read by any operator,
 * approved by approvers other than the proposer (the approval that reaches ADMIN_APPROVALS_REQUIRED
 * executes it, in the same database transaction), withdrawn by the proposer or rejected by an
 * approver. Every step is kept with who and when (@wh/ops proposals.ts).
 */
import { Approved, Decision, IdParams, ProposalList, ProposalsQuery, ProposalView } from '@wh/api-schemas/admin'
import { NotFoundError } from '@wh/core'
import { approve, getProposal, hasRole, listProposals, type Proposal, withdrawProposal } from '@wh/ops'
import type { FastifyInstance } from 'fastify'
import type Type from 'typebox'
import { deskRoute } from './roles'
import { type AdminRoutesOptions, actorOf } from './routes'

const tag = { tags: ['proposals'] }

/** A proposal as the desk answers it: times as ISO strings. */
export function proposalOut(p: Proposal): Type.Static<typeof ProposalView> {
  return {
    ...p,
    approvals: p.approvals.map((a) => ({ approver: a.approver, at: a.at.toISOString() })),
    createdAt: p.createdAt.toISOString(),
    expiresAt: p.expiresAt.toISOString(),
    outcome: p.outcome ? { ...p.outcome, decidedAt: p.outcome.decidedAt.toISOString() } : null,
  }
}

export async function deskProposalRoutes(app: FastifyInstance, opts: AdminRoutesOptions) {
  proposalReadRoutes(app, opts)
  proposalDecisionRoutes(app, opts)
}

/** Listing and reading proposals. */
function proposalReadRoutes(app: FastifyInstance, opts: AdminRoutesOptions): void {
  app.get<{ Querystring: Type.Static<typeof ProposalsQuery> }>(
    '/admin/proposals',
    deskRoute('viewer', {
      ...tag,
      summary: 'Proposals, newest first: the open ones (waiting for approvals) by default, or all',
      querystring: ProposalsQuery,
      response: { 200: ProposalList },
    }),
    async (request) => ({
      items: (
        await listProposals(opts.sql, {
          open: (request.query.status ?? 'open') === 'open',
          ...(request.query.limit !== undefined && { limit: request.query.limit }),
        })
      ).map(proposalOut),
    }),
  )

  app.get<{ Params: Type.Static<typeof IdParams> }>(
    '/admin/proposals/:id',
    deskRoute('viewer', {
      ...tag,
      summary: 'One proposal: who proposed what and why, each approval with who and when, the outcome',
      params: IdParams,
      response: { 200: ProposalView, 404: { $ref: 'ErrorBody#' } },
    }),
    async (request) => {
      const p = await getProposal(opts.sql, request.params.id)
      if (!p) throw new NotFoundError('proposal')
      return proposalOut(p)
    },
  )
}

/** Approving, withdrawing or rejecting a proposal. */
function proposalDecisionRoutes(app: FastifyInstance, opts: AdminRoutesOptions): void {
  const deps = { sql: opts.sql, clock: opts.clock, clients: opts.clients, approvalsRequired: opts.approvalsRequired }
  app.post<{ Params: Type.Static<typeof IdParams> }>(
    '/admin/proposals/:id/approve',
    deskRoute('approver', {
      ...tag,
      summary: 'Approve a proposal; the approval that completes it executes the decision',
      description:
        'Refused for its proposer (403 FOUR_EYES), once expired (409 PROPOSAL_EXPIRED) or decided (409 ' +
        'PROPOSAL_DECIDED). Approving again changes nothing (`alreadyDone`). When the state refuses the decision ' +
        'at execution (the subject no longer waits, the chain shows otherwise), the proposal closes as refused ' +
        'and the answer is that 409.',
      params: IdParams,
      response: {
        200: Approved,
        403: { $ref: 'ErrorBody#' },
        404: { $ref: 'ErrorBody#' },
        409: { $ref: 'ErrorBody#' },
      },
    }),
    async (request) => {
      const r = await approve(deps, request.params.id, actorOf(request))
      return { proposal: proposalOut(r.proposal), executed: r.executed, alreadyDone: r.alreadyDone }
    },
  )

  app.post<{ Params: Type.Static<typeof IdParams>; Body: Type.Static<typeof Decision> }>(
    '/admin/proposals/:id/withdraw',
    deskRoute('operator', {
      ...tag,
      summary: 'Withdraw a proposal (its proposer), or reject it (an approver)',
      params: IdParams,
      body: Decision,
      response: {
        200: ProposalView,
        403: { $ref: 'ErrorBody#' },
        404: { $ref: 'ErrorBody#' },
        409: { $ref: 'ErrorBody#' },
      },
    }),
    async (request) => {
      const operator = request.operator
      const p = await withdrawProposal(
        opts.sql,
        request.params.id,
        { name: actorOf(request), approver: operator ? hasRole(operator.role, 'approver') : false },
        request.body.reason,
      )
      return proposalOut(p)
    },
  )
}
