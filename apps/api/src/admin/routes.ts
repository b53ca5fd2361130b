/**
 * The operator's desk over HTTP (docs/operations.md): what is waiting for an operator and the
 * decisions they may take, each through the same function the worker's CLIs call (packages/ops),
 * each recorded in operator_actions with who and why. A decision repeated after it took effect
 * answers as before with `alreadyDone: true`; a different decision on the same subject is 409.
 */
import {
  ActionList,
  ActionsQuery,
  ChainList,
  ChainParams,
  ClearStopResult,
  Decision,
  HeldDecision,
  HeldList,
  IdParams,
  Overview,
  PlatformStopResult,
  ResumeBody,
  ResumeResult,
  SolvencyHistory,
  SolvencyHistoryQuery,
  SolvencyView,
  StoppedList,
} from '@wh/api-schemas/admin'
import { AppError, type Clock, NotFoundError } from '@wh/core'
import type { Sql } from '@wh/db'
import {
  clearPlatformStop,
  clearStop,
  lastOperatorAction,
  listHeld,
  listOperatorActions,
  listStoppedSubaccounts,
  openPlatformStops,
  type RecordedOperatorAction,
  raisePlatformStop,
  resolveHeld,
  resumeChain,
} from '@wh/ops'
import { latestRun, listRuns, openDeficits } from '@wh/solvency'
import { type ChainClients, type ChainName, listCursors, OutboundNotHeldError } from '@wh/wallet'
import type { FastifyInstance } from 'fastify'
import type Type from 'typebox'

export interface AdminRoutesOptions {
  sql: Sql
  clock: Clock
  /** read-only clients: resuming a chain reads the hash of the block below the new cursor */
  clients: ReadonlyMap<ChainName, ChainClients>
}

const tag = { tags: ['admin'] }

const actionOut = (a: RecordedOperatorAction) => ({ ...a, at: a.at.toISOString() })

export default async function adminRoutes(app: FastifyInstance, opts: AdminRoutesOptions) {
  overviewAndHeldRoutes(app, opts)
  chainAndStopRoutes(app, opts)
  actionsAndSolvencyRoutes(app, opts)
  platformStopRoutes(app, opts)
}

/** The overview, and the transactions held for an operator (recheck or fail). */
function overviewAndHeldRoutes(app: FastifyInstance, opts: AdminRoutesOptions): void {
  const { sql } = opts
  app.get(
    '/admin/overview',
    { schema: { ...tag, summary: 'What waits for an operator', response: { 200: Overview } } },
    async () => {
      const [held, cursors, stopped, [last], stops, deficits] = await Promise.all([
        listHeld(sql),
        listCursors(sql),
        listStoppedSubaccounts(sql),
        listOperatorActions(sql, { limit: 1 }),
        openPlatformStops(sql),
        openDeficits(sql),
      ])
      return {
        heldTransactions: held.length,
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
    { schema: { ...tag, summary: 'Transactions held for an operator', response: { 200: HeldList } } },
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

  for (const verdict of ['recheck', 'failed'] as const) {
    const path = verdict === 'recheck' ? '/admin/held/:id/recheck' : '/admin/held/:id/fail'
    app.post<{ Params: Type.Static<typeof IdParams>; Body: Type.Static<typeof Decision> }>(
      path,
      {
        schema: {
          ...tag,
          summary:
            verdict === 'recheck'
              ? 'The provider was at fault: read the chain afresh, the waiting row back in its queue'
              : 'Another transaction took the nonce: this one is failed, the waiting row back in its queue',
          params: IdParams,
          body: Decision,
          response: { 200: HeldDecision },
        },
      },
      async (request) => {
        const { id } = request.params
        try {
          const r = await resolveHeld(sql, id, verdict, request.body.reason, request.body.operator)
          return { id, verdict, state: r.state, txHash: r.txHash, alreadyDone: false }
        } catch (e) {
          if (!(e instanceof OutboundNotHeldError)) throw e
          const action = verdict === 'failed' ? 'outbound_failed' : 'outbound_rechecked'
          const last = await lastOperatorAction(sql, id)
          if (last?.action !== action) throw e
          const [row] = await sql<{ state: string; tx_hash: string }[]>`
            select state, tx_hash from outbound_txs where id = ${id}`
          return { id, verdict, state: row?.state ?? 'unknown', txHash: row?.tx_hash ?? '', alreadyDone: true }
        }
      },
    )
  }
}

/** Halted deposit watches (resume) and subaccounts stopped by reconciliation (clear). */
function chainAndStopRoutes(app: FastifyInstance, opts: AdminRoutesOptions): void {
  const { sql } = opts
  app.get(
    '/admin/chains',
    { schema: { ...tag, summary: 'The deposit watch per chain: cursor and halt', response: { 200: ChainList } } },
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

  app.post<{ Params: Type.Static<typeof ChainParams>; Body: Type.Static<typeof ResumeBody> }>(
    '/admin/chains/:chain/resume',
    {
      schema: {
        ...tag,
        summary: 'Resume a halted deposit watch (after inspecting its deposits: cli/chain-halt.ts inspect)',
        params: ChainParams,
        body: ResumeBody,
        response: { 200: ResumeResult },
      },
    },
    async (request) => {
      const chain = request.params.chain as ChainName
      const client = opts.clients.get(chain)?.publicClient
      if (!client) throw new NotFoundError(`no client for ${chain}`)
      const resumed = await resumeChain(sql, client, {
        chain,
        reason: request.body.reason,
        actor: request.body.operator,
        ...(request.body.fromBlock !== undefined && { fromBlock: BigInt(request.body.fromBlock) }),
      })
      if (resumed) return { chain, resumed: true, alreadyDone: false }
      const last = await lastOperatorAction(sql, chain)
      if (last?.action === 'chain_resumed') return { chain, resumed: true, alreadyDone: true }
      throw new AppError({
        code: 'CHAIN_NOT_HALTED',
        statusCode: 409,
        message: `the ${chain} deposit watch is not halted`,
      })
    },
  )

  app.get(
    '/admin/subaccounts/stopped',
    { schema: { ...tag, summary: 'Subaccounts stopped by reconciliation', response: { 200: StoppedList } } },
    async () => ({
      items: (await listStoppedSubaccounts(sql)).map((s) => ({ ...s, stoppedAt: s.stoppedAt.toISOString() })),
    }),
  )

  app.post<{ Params: Type.Static<typeof IdParams>; Body: Type.Static<typeof Decision> }>(
    '/admin/subaccounts/:id/clear-stop',
    {
      schema: {
        ...tag,
        summary: 'Clear a reconciliation stop (journals stop_cleared with the reason)',
        params: IdParams,
        body: Decision,
        response: { 200: ClearStopResult },
      },
    },
    async (request) => {
      const { id } = request.params
      const r = await clearStop(
        { sql, clock: opts.clock },
        { subaccountRowId: id, reason: request.body.reason, actor: request.body.operator },
      )
      if (r.cleared) return { id, cleared: true, alreadyDone: false }
      const last = await lastOperatorAction(sql, id)
      if (last?.action === 'stop_cleared') return { id, cleared: true, alreadyDone: true }
      throw new AppError({ code: 'SUBACCOUNT_NOT_STOPPED', statusCode: 409, message: 'the subaccount is not stopped' })
    },
  )
}

/** The operators' log and the solvency runs. */
function actionsAndSolvencyRoutes(app: FastifyInstance, opts: AdminRoutesOptions): void {
  const { sql } = opts
  app.get<{ Querystring: Type.Static<typeof ActionsQuery> }>(
    '/admin/actions',
    {
      schema: {
        ...tag,
        summary: "The operators' log, newest first",
        querystring: ActionsQuery,
        response: { 200: ActionList },
      },
    },
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
    {
      schema: {
        ...tag,
        summary: 'The latest solvency run with its legs, the open deficit episodes and the platform stop',
        response: { 200: SolvencyView },
      },
    },
    async () => {
      const [latest, complete, deficits, stops] = await Promise.all([
        latestRun(sql),
        latestRun(sql, { completeOnly: true }),
        openDeficits(sql),
        openPlatformStops(sql),
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
      }
    },
  )

  app.get<{ Querystring: Type.Static<typeof SolvencyHistoryQuery> }>(
    '/admin/solvency/runs',
    {
      schema: {
        ...tag,
        summary: 'Solvency runs, newest first: totals per currency (for charts)',
        querystring: SolvencyHistoryQuery,
        response: { 200: SolvencyHistory },
      },
    },
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

/** Raising and clearing the platform stop, on the record. */
function platformStopRoutes(app: FastifyInstance, opts: AdminRoutesOptions): void {
  const { sql } = opts
  app.post<{ Body: Type.Static<typeof Decision> }>(
    '/admin/platform-stop',
    {
      schema: {
        ...tag,
        summary: 'Stop the platform: new positions and withdrawals above PLATFORM_STOP_WITHDRAWAL_MAX_USD are refused',
        body: Decision,
        response: { 200: PlatformStopResult },
      },
    },
    async (request) => {
      const r = await raisePlatformStop(sql, {
        raisedBy: 'operator',
        reason: request.body.reason,
        actor: request.body.operator,
      })
      return { stopped: true, alreadyDone: !r.raised }
    },
  )

  app.post<{ Body: Type.Static<typeof Decision> }>(
    '/admin/platform-stop/clear',
    {
      schema: {
        ...tag,
        summary: 'Clear every open platform stop (after explaining the deficit), recorded with who and why',
        body: Decision,
        response: { 200: PlatformStopResult },
      },
    },
    async (request) => {
      const cleared = await clearPlatformStop(sql, { reason: request.body.reason, actor: request.body.operator })
      return { stopped: false, alreadyDone: cleared === 0 }
    },
  )
}
