/**
 * The desk's decisions that release money or lift a guard (docs/operations.md "Approvals"): failing
 * a held transaction, marking it sent, resuming a halted chain, clearing a subaccount's stop or the
 * platform stop. Each is proposed here by an operator (202 with the proposal, or the open one there
 * was) and takes effect once enough other approvers approved it (proposals.ts). The subject must
 * still wait for it when proposed (409 otherwise).
 */
import { ChainParams, Decision, IdParams, MarkSentBody, Proposed, ResumeBody } from '@wh/api-schemas/admin'
import { type Proposal, type ProposalAction, propose } from '@wh/ops'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type Type from 'typebox'
import { proposalOut } from './proposals'
import { deskRoute } from './roles'
import { type AdminRoutesOptions, actorOf } from './routes'

const tag = { tags: ['decisions'] }
const FOUR_EYES =
  'Proposes it: it takes effect once ADMIN_APPROVALS_REQUIRED other operators with the approver role approved it ' +
  '(POST /admin/proposals/{id}/approve) before it expires. An open proposal of the same action on the same subject ' +
  'is answered instead of a second one.'
const response = { 202: Proposed, 404: { $ref: 'ErrorBody#' }, 409: { $ref: 'ErrorBody#' } }

type ProposeFor = (
  request: FastifyRequest,
  reply: FastifyReply,
  p: { action: ProposalAction; subject: string; params?: Record<string, unknown>; reason: string },
) => Promise<FastifyReply>

export async function deskDecisionRoutes(app: FastifyInstance, opts: AdminRoutesOptions) {
  const proposeFor: ProposeFor = async (request, reply, p) => {
    const r = await propose(
      { sql: opts.sql, clock: opts.clock, clients: opts.clients, approvalsRequired: opts.approvalsRequired },
      { ...p, proposedBy: actorOf(request) },
    )
    return reply.code(202).send({ proposal: proposalOut(r.proposal as Proposal), existing: r.existing })
  }
  heldDecisionRoutes(app, proposeFor)
  guardDecisionRoutes(app, proposeFor)
}

/** Failing a held transaction, or marking it sent. */
function heldDecisionRoutes(app: FastifyInstance, proposeFor: ProposeFor): void {
  app.post<{ Params: Type.Static<typeof IdParams>; Body: Type.Static<typeof Decision> }>(
    '/admin/held/:id/fail',
    deskRoute('operator', {
      ...tag,
      summary: 'Another transaction took the nonce: this one is failed, the waiting row back in its queue',
      description: `${FOUR_EYES} When the last approval comes, the chain is read again: a signed version with a receipt (it was mined) or a nonce not yet used at confirmed depth (it may still be mined) refuses it (409 OUTBOUND_MINED, OUTBOUND_MAY_STILL_MINE).`,
      params: IdParams,
      body: Decision,
      response,
    }),
    (request, reply) =>
      proposeFor(request, reply, { action: 'outbound_fail', subject: request.params.id, reason: request.body.reason }),
  )

  app.post<{ Params: Type.Static<typeof IdParams>; Body: Type.Static<typeof MarkSentBody> }>(
    '/admin/held/:id/mark-sent',
    deskRoute('operator', {
      ...tag,
      summary: 'One of its signed versions was mined: settle the held transaction on that receipt',
      description: `${FOUR_EYES} When the last approval comes, the chain must show the version's receipt at confirmed depth in a block it still has (else 409 OUTBOUND_RECEIPT_NOT_FINAL); the journal books the gas that receipt states.`,
      params: IdParams,
      body: MarkSentBody,
      response,
    }),
    (request, reply) =>
      proposeFor(request, reply, {
        action: 'outbound_mark_sent',
        subject: request.params.id,
        params: { txHash: request.body.txHash.toLowerCase() },
        reason: request.body.reason,
      }),
  )
}

/** Lifting a guard: a halted chain, a subaccount's stop, the platform stop. */
function guardDecisionRoutes(app: FastifyInstance, proposeFor: ProposeFor): void {
  app.post<{ Params: Type.Static<typeof ChainParams>; Body: Type.Static<typeof ResumeBody> }>(
    '/admin/chains/:chain/resume',
    deskRoute('operator', {
      ...tag,
      summary:
        'Resume a halted deposit watch from `fromBlock` (after inspecting its deposits: cli/chain-halt.ts inspect)',
      description: FOUR_EYES,
      params: ChainParams,
      body: ResumeBody,
      response,
    }),
    (request, reply) =>
      proposeFor(request, reply, {
        action: 'chain_resume',
        subject: request.params.chain,
        params: request.body.fromBlock === undefined ? {} : { fromBlock: request.body.fromBlock },
        reason: request.body.reason,
      }),
  )

  app.post<{ Params: Type.Static<typeof IdParams>; Body: Type.Static<typeof Decision> }>(
    '/admin/subaccounts/:id/clear-stop',
    deskRoute('operator', {
      ...tag,
      summary: 'Clear a reconciliation stop (journals stop_cleared with the reason)',
      description: FOUR_EYES,
      params: IdParams,
      body: Decision,
      response,
    }),
    (request, reply) =>
      proposeFor(request, reply, {
        action: 'subaccount_stop_clear',
        subject: request.params.id,
        reason: request.body.reason,
      }),
  )

  app.post<{ Body: Type.Static<typeof Decision> }>(
    '/admin/platform-stop/clear',
    deskRoute('operator', {
      ...tag,
      summary: 'Clear every open platform stop (after explaining the deficit)',
      description: FOUR_EYES,
      body: Decision,
      response,
    }),
    (request, reply) =>
      proposeFor(request, reply, { action: 'platform_stop_clear', subject: 'platform', reason: request.body.reason }),
  )
}
