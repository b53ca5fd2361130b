/**
 * The operator's desk over HTTP (docs/operations.md): what is waiting for an operator, and the
 * decisions one operator may take alone (a recheck, raising the platform stop), each through the
 * same function the worker's CLIs call (packages/ops), recorded in operator_actions with the
 * signed-in operator and why. The decisions that release money are proposals (decisions.ts,
 * proposals.ts). A decision repeated after it took effect answers as before with `alreadyDone: true`.
 */
import {
  ActionList,
  ActionsQuery,
  ChainList,
  Decision,
  HeldDecision,
  HeldList,
  IdParams,
  Overview,
  PlatformStopResult,
  SolvencyHistory,
  SolvencyHistoryQuery,
  SolvencyView,
  StoppedList,
} from '@wh/api-schemas/admin'
import type { Clock } from '@wh/core'
import type { Sql } from '@wh/db'
import { listBalanceChecks } from '@wh/ledger'
import {
  heldCounts,
  listHeld,
  listOperatorActions,
  listProposals,
  listStoppedSubaccounts,
  openPlatformStops,
  type RecordedOperatorAction,
  raisePlatformStop,
  recheckHeld,
} from '@wh/ops'
import { latestRun, listRuns, openDeficits } from '@wh/solvency'
import { type ChainClients, type ChainName, listCursors } from '@wh/wallet'
import type { FastifyInstance } from 'fastify'
import type Type from 'typebox'
import { deskRoute } from './roles'

export interface AdminRoutesOptions {
  sql: Sql
  clock: Clock
  /** read-only clients: the chain is read again before a decision that releases money */
  clients: ReadonlyMap<ChainName, ChainClients>
  /** ADMIN_APPROVALS_REQUIRED */
  approvalsRequired: number
}

const tag = { tags: ['admin'] }

const actionOut = (a: RecordedOperatorAction) => ({ ...a, at: a.at.toISOString() })

/** The operator of a request the desk's hook let through. */
export const actorOf = (request: { operator?: { name: string } }): string => request.operator?.name as string

export default async function adminRoutes(app: FastifyInstance, opts: AdminRoutesOptions) {
  overviewAndHeldRoutes(app, opts)
  chainAndStopRoutes(app, opts)
  actionsAndSolvencyRoutes(app, opts)
  platformStopRoutes(app, opts)
}

/** The overview, and the transactions held for an operator (a recheck here; failing them is a proposal). */
function overviewAndHeldRoutes(app: FastifyInstance, opts: AdminRoutesOptions): void {
  const { sql } = opts
  app.get(
    '/admin/overview',
    deskRoute('viewer', { ...tag, summary: 'What waits for an operator', response: { 200: Overview } }),
    async () => {
      const [held, cursors, stopped, [last], stops, deficits, proposals, [check]] = await Promise.all([
        heldCounts(sql),
        listCursors(sql),
        listStoppedSubaccounts(sql),
        listOperatorActions(sql, { limit: 1 }),
        openPlatformStops(sql),
        openDeficits(sql),
        listProposals(sql, { open: true, limit: 500 }),
        listBalanceChecks(sql),
      ])
      return {
        heldTransactions: held.transactions,
        heldWithdrawals: held.withdrawals,
        heldDeposits: held.deposits,
        openProposals: proposals.length,
        balanceDifferences: check ? check.differenceCount : null,
        haltedChains: cursors.filter((c) => c.haltedAt !== null).map((c) => c.chain),
        stoppedSubaccounts: stopped.length,
        platformStopped: stops.length > 0,
        deficits: deficits.map((d) => d.currency),
        lastAction: last ? actionOut(last) : null,
      }
    },
  )

  app.get(
    '/admin/held',
    deskRoute('viewer', { ...tag, summary: 'Transactions held for an operator', response: { 200: HeldList } }),
    async () => ({
      items: (await listHeld(sql)).map((h) => ({
        id: h.id,
        chain: h.chain,
        purpose: h.purpose,
        refId: h.ref_id,
        nonce: h.nonce,
        txHash: h.tx_hash,
        contradictions: h.contradictions,
        holdReason: h.hold_reason,
        updatedAt: h.updated_at.toISOString(),
      })),
    }),
  )

  app.post<{ Params: Type.Static<typeof IdParams>; Body: Type.Static<typeof Decision> }>(
    '/admin/held/:id/recheck',
    deskRoute('operator', {
      ...tag,
      summary: 'The provider was at fault: read the chain afresh, the waiting row back in its queue',
      description:
        'One operator may: nothing is released on this word, the next confirmation reads the chain again. ' +
        'The outbox row, the record and the release of the waiting withdrawal or deposit are one transaction.',
      params: IdParams,
      body: Decision,
      response: { 200: HeldDecision },
    }),
    async (request) => {
      const { id } = request.params
      const r = await recheckHeld(sql, id, { reason: request.body.reason, actor: actorOf(request) })
      return {
        id,
        verdict: 'recheck' as const,
        state: r.record.state,
        txHash: r.record.txHash,
        alreadyDone: r.alreadyDone,
      }
    },
  )
}

/** Halted deposit watches and subaccounts stopped by reconciliation (lifting either is a proposal). */
function chainAndStopRoutes(app: FastifyInstance, opts: AdminRoutesOptions): void {
  const { sql } = opts
  app.get(
    '/admin/chains',
    deskRoute('viewer', {
      ...tag,
      summary: 'The deposit watch per chain: cursor and halt',
      response: { 200: ChainList },
    }),
    async () => ({
      items: (await listCursors(sql)).map((c) => ({
        chain: c.chain,
        nextBlock: c.nextBlock.toString(),
        blockHash: c.blockHash,
        haltedAt: c.haltedAt ? c.haltedAt.toISOString() : null,
        haltReason: c.haltReason,
      })),
    }),
  )

  app.get(
    '/admin/subaccounts/stopped',
    deskRoute('viewer', { ...tag, summary: 'Subaccounts stopped by reconciliation', response: { 200: StoppedList } }),
    async () => ({
      items: (await listStoppedSubaccounts(sql)).map((s) => ({ ...s, stoppedAt: s.stoppedAt.toISOString() })),
    }),
  )
}

/** The operators' log and the solvency runs. */
function actionsAndSolvencyRoutes(app: FastifyInstance, opts: AdminRoutesOptions): void {
  const { sql } = opts
  app.get<{ Querystring: Type.Static<typeof ActionsQuery> }>(
    '/admin/actions',
    deskRoute('viewer', {
      ...tag,
      summary: "The operators' log, newest first",
      querystring: ActionsQuery,
      response: { 200: ActionList },
    }),
    async (request) => ({
      items: (
        await listOperatorActions(sql, {
          ...(request.query.limit !== undefined && { limit: request.query.limit }),
          ...(request.query.subject !== undefined && { subject: request.query.subject }),
        })
      ).map(actionOut),
    }),
  )

  app.get(
    '/admin/solvency',
    deskRoute('viewer', {
      ...tag,
      summary:
        'The latest solvency run with its legs, the open deficit episodes, the platform stop and the balance check',
      response: { 200: SolvencyView },
    }),
    async () => {
      const [latest, complete, deficits, stops, [check]] = await Promise.all([
        latestRun(sql),
        latestRun(sql, { completeOnly: true }),
        openDeficits(sql),
        openPlatformStops(sql),
        listBalanceChecks(sql),
      ])
      return {
        latest: latest
          ? { ...latest, startedAt: latest.startedAt.toISOString(), finishedAt: latest.finishedAt.toISOString() }
          : null,
        lastComplete: complete ? complete.finishedAt.toISOString() : null,
        deficits: deficits.map((d) => ({ ...d, openedAt: d.openedAt.toISOString() })),
        stops: stops.map((s) => ({
          id: s.id,
          raisedAt: s.raisedAt.toISOString(),
          raisedBy: s.raisedBy,
          reason: s.reason,
        })),
        balanceCheck: check ? { ...check, startedAt: check.startedAt.toISOString() } : null,
      }
    },
  )

  app.get<{ Querystring: Type.Static<typeof SolvencyHistoryQuery> }>(
    '/admin/solvency/runs',
    deskRoute('viewer', {
      ...tag,
      summary: 'Solvency runs, newest first: totals per currency (for charts)',
      querystring: SolvencyHistoryQuery,
      response: { 200: SolvencyHistory },
    }),
    async (request) => {
      const { limit, before } = request.query
      const runs = await listRuns(sql, { limit: limit ?? 50, before: before ? new Date(before) : undefined })
      return {
        items: runs.map((r) => ({
          id: r.id,
          finishedAt: r.finishedAt.toISOString(),
          complete: r.complete,
          totals: r.totals,
        })),
      }
    },
  )
}

/** Raising the platform stop: one operator may (it only refuses; lifting it is a proposal). */
function platformStopRoutes(app: FastifyInstance, opts: AdminRoutesOptions): void {
  const { sql } = opts
  app.post<{ Body: Type.Static<typeof Decision> }>(
    '/admin/platform-stop',
    deskRoute('operator', {
      ...tag,
      summary: 'Stop the platform: new positions and withdrawals above PLATFORM_STOP_WITHDRAWAL_MAX_USD are refused',
      body: Decision,
      response: { 200: PlatformStopResult },
    }),
    async (request) => {
      const r = await raisePlatformStop(sql, {
        raisedBy: 'operator',
        reason: request.body.reason,
        actor: actorOf(request),
      })
      return { stopped: true, alreadyDone: !r.raised }
    },
  )
}
