/**
 * Subaccounts (spec 4.2): the caller's subaccounts with their journal
 * balances, and POST /subaccounts/:asset/release, which records a release request (202); the
 * release tick in the worker withdraws what the subaccount can free and says why it waits.
 * docs/exchange.md "Subaccounts: funding and release" has the states.
 */

import { ListResponse, Release, ReleaseHeaders, ReleaseParams } from '@wh/api-schemas/subaccounts'
import { decimalsOf, fromBaseUnits } from '@wh/core'
import type { Sql } from '@wh/db'
import type { Queryable } from '@wh/ledger'
import type { FastifyInstance } from 'fastify'
import type Type from 'typebox'
import { currentUser, requireAuth } from '../../plugins/auth'
import { IdempotencyKeyReusedError, ReleaseAlreadyOpenError, SubaccountNotFoundError } from './errors'
import { listSubaccounts, OPEN_RELEASE_STATES } from './read'

export interface SubaccountRoutesOptions {
  sql: Sql
}

interface ReleaseRow {
  id: string
  asset: string
  state: string
  reason: string | null
  created_at: Date
  updated_at: Date
  completed_at: Date | null
}

const UNIQUE_VIOLATION = '23505'

/** Base units as a decimal string of the currency (an unknown currency stays in base units). */
export function balanceOut(b: { currency: string; units: bigint }) {
  const decimals = decimalsOf(b.currency) ?? 0
  return { currency: b.currency, decimals, amount: fromBaseUnits(b.units, decimals) }
}

function releaseOut(r: ReleaseRow) {
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

  const byKey = async (q: Queryable, userId: string, key: string) =>
    (
      await q<ReleaseRow[]>`
        select r.id, s.asset, r.state, r.reason, r.created_at, r.updated_at, r.completed_at
        from subaccount_releases r join subaccounts s on s.id = r.subaccount_id
        where r.user_id = ${userId} and r.idempotency_key = ${key}`
    )[0]
  const sameAsset = (row: ReleaseRow, asset: string) => {
    if (row.asset !== asset) throw new IdempotencyKeyReusedError()
    return row
  }

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
        summary: 'Release a subaccount: a background tick withdraws what it holds back to the free balance',
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
      const { asset } = request.params
      const key = request.headers['idempotency-key']
      if (key !== undefined) {
        const earlier = await byKey(sql, userId, key)
        if (earlier) return reply.code(202).send(releaseOut(sameAsset(earlier, asset)))
      }
      try {
        const row = await sql.begin(async (tx) => {
          // the subaccount row lock serialises requests for one subaccount: one open release at most
          const [sub] = await tx<{ id: string }[]>`
            select id from subaccounts where user_id = ${userId} and asset = ${asset} for update`
          if (!sub) throw new SubaccountNotFoundError(asset)
          if (key !== undefined) {
            const raced = await byKey(tx, userId, key)
            if (raced) return sameAsset(raced, asset)
          }
          const [open] = await tx<{ id: string }[]>`
            select id from subaccount_releases
            where subaccount_id = ${sub.id} and state in ${tx([...OPEN_RELEASE_STATES])} limit 1`
          if (open) throw new ReleaseAlreadyOpenError(open.id)
          const [inserted] = await tx<ReleaseRow[]>`
            insert into subaccount_releases (user_id, subaccount_id, state, idempotency_key)
            values (${userId}, ${sub.id}, 'requested', ${key ?? null})
            returning id, ${asset}::text as asset, state, reason, created_at, updated_at, completed_at`
          return inserted as ReleaseRow
        })
        return reply.code(202).send(releaseOut(row))
      } catch (err) {
        if (key !== undefined && (err as { code?: string }).code === UNIQUE_VIOLATION) {
          const winner = await byKey(sql, userId, key)
          if (winner) return reply.code(202).send(releaseOut(sameAsset(winner, asset)))
        }
        throw err
      }
    },
  )
}
