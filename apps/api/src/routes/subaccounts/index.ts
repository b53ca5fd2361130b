/**
 * Subaccounts (spec 4.2): the caller's subaccounts with their journal
 * balances, and POST /subaccounts/:asset/release, which records a release request (202); its job
 * (and the release tick, which sweeps) withdraws what the subaccount can free and says why it waits.
 * docs/exchange.md "Subaccounts: funding and release" has the states.
 */

import { ListResponse, Release, ReleaseHeaders, ReleaseParams } from '@wh/api-schemas/subaccounts'
import { decimalsOf, fromBaseUnits } from '@wh/core'
import type { Sql } from '@wh/db'
import { type ReleaseView, requestRelease } from '@wh/subaccounts'
import type { FastifyInstance } from 'fastify'
import type Type from 'typebox'
import type { Jobs } from '../../lib/jobs'
import { currentUser, requireAuth } from '../../plugins/auth'
import { listSubaccounts } from './read'

export interface SubaccountRoutesOptions {
  sql: Sql
  /** the `release.run` job each accepted release adds after its commit (none: the tick alone) */
  jobs?: Jobs
}

/** Base units as a decimal string of the currency (an unknown currency stays in base units). */
export function balanceOut(b: { currency: string; units: bigint }) {
  const decimals = decimalsOf(b.currency) ?? 0
  return { currency: b.currency, decimals, amount: fromBaseUnits(b.units, decimals) }
}

function releaseOut(r: ReleaseView) {
  return {
    id: r.id,
    asset: r.asset,
    state: r.state,
    reason: r.reason,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
    completedAt: r.completed_at ? r.completed_at.toISOString() : null,
  }
}

export default async function subaccountRoutes(app: FastifyInstance, opts: SubaccountRoutesOptions) {
  requireAuth(app)
  const { sql } = opts

  app.get(
    '/subaccounts',
    {
      schema: {
        tags: ['subaccounts'],
        summary: "The caller's subaccounts: state, journal balances, fundings in flight, open releases",
        response: { 200: ListResponse },
      },
    },
    async (request) => {
      const { userId } = currentUser(request)
      const subs = await listSubaccounts(sql, userId)
      return {
        items: subs.map((s) => ({
          asset: s.asset,
          exchangeId: s.exchangeId,
          state: s.state,
          stopReason: s.stopReason,
          balances: s.balances.map(balanceOut),
          pendingFundings: s.pendingFundings.map(balanceOut),
          openReleases: s.openReleases.map((r) => ({
            id: r.id,
            state: r.state,
            reason: r.reason,
            createdAt: r.createdAt.toISOString(),
          })),
        })),
      }
    },
  )

  app.post<{ Params: Type.Static<typeof ReleaseParams>; Headers: Type.Static<typeof ReleaseHeaders> }>(
    '/subaccounts/:asset/release',
    {
      schema: {
        tags: ['subaccounts'],
        summary: 'Release a subaccount: the worker withdraws what it holds back to the free balance',
        description:
          'Answers 202 with the release. It waits (state `waiting`, with a reason) while positions or orders are ' +
          'open. An Idempotency-Key header (at most 128 printable characters) makes a retry answer the same ' +
          'release; a second release while one is open is a 409 RELEASE_ALREADY_OPEN.',
        params: ReleaseParams,
        headers: ReleaseHeaders,
        response: {
          202: Release,
          400: { $ref: 'ErrorBody#' },
          404: { $ref: 'ErrorBody#' },
          409: { $ref: 'ErrorBody#' },
          422: { $ref: 'ErrorBody#' },
        },
      },
    },
    async (request, reply) => {
      const { userId } = currentUser(request)
      const key = request.headers['idempotency-key']
      const release = await requestRelease(sql, {
        userId,
        asset: request.params.asset,
        ...(key !== undefined && { idempotencyKey: key }),
      })
      // committed: the worker plans it now (a replay of a closed release has nothing to do)
      if (release.state === 'requested' || release.state === 'waiting')
        await opts.jobs?.afterCommit(request, 'release.run', release.id, userId)
      return reply.code(202).send(releaseOut(release))
    },
  )
}
