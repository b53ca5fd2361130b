/**
 * The proof of liabilities (docs/solvency.md "Proof of liabilities"). Public: the latest published
 * root (GET /proof-of-liabilities) and every root, newest first (GET /proof-of-liabilities/roots).
 * Behind the bearer guard: the caller's leaf and path to the latest root (GET /portfolio/proof).
 * The worker publishes; this controller only reads, through @wh/proof's store.
 */
import {
  LiabilityRoot,
  PortfolioProofResponse,
  ROOTS_PAGE_LIMIT_DEFAULT,
  ROOTS_PAGE_LIMIT_MAX,
  RootsQuery,
  type RootsQueryValue,
  RootsResponse,
} from '@wh/api-schemas/liabilities'
import { AppError, decimalsOf, fromBaseUnits } from '@wh/core'
import type { Sql } from '@wh/db'
import { latestRoot, listRoots, proofFromStore, type StoredRoot } from '@wh/proof/publish'
import type { FastifyInstance } from 'fastify'
import { decodeCursor, encodeCursor, pageLimit } from '../../lib/page'
import { currentUser, requireAuth } from '../../plugins/auth'
import { ETAG_NOT_MODIFIED, withEtagHeaders } from '../../plugins/etag'

/** Seconds a browser or a CDN may keep a public answer of the proof (a root is published once a day). */
export const PROOF_MAX_AGE_S = 60

export interface LiabilitiesRoutesOptions {
  sql: Sql
}

export class NoLiabilityRootError extends AppError {
  constructor() {
    super({ code: 'NO_LIABILITY_ROOT', statusCode: 404, message: 'no proof of liabilities has been published yet' })
  }
}

export class NotInLiabilityTreeError extends AppError {
  constructor(rootId: string | null) {
    super({
      code: 'NOT_IN_LIABILITY_TREE',
      statusCode: 404,
      message:
        rootId === null
          ? 'no proof of liabilities has been published yet'
          : 'the caller is not in the latest proof of liabilities (nothing was held when it was built)',
      ...(rootId !== null && { details: { rootId } }),
    })
  }
}

/** A stored root as the API shows it: totals in base units and formatted with the currency's decimals. */
export function rootOut(r: StoredRoot) {
  return {
    id: r.id,
    root: r.root,
    currencies: [...r.currencies],
    totals: r.currencies.map((currency) => {
      const amount = r.totals[currency] ?? '0'
      const decimals = decimalsOf(currency) ?? 0
      return { currency, decimals, amount, value: fromBaseUnits(BigInt(amount), decimals) }
    }),
    leafCount: r.leafCount,
    depth: r.depth,
    publishedAt: r.createdAt.toISOString(),
    balancesAt: r.balancesAt.toISOString(),
  }
}

export default async function liabilitiesRoutes(app: FastifyInstance, opts: LiabilitiesRoutesOptions) {
  const { sql } = opts
  const errors = { 404: { $ref: 'ErrorBody#' } }

  app.get(
    '/proof-of-liabilities',
    {
      config: { etag: { maxAgeS: PROOF_MAX_AGE_S } },
      schema: {
        tags: ['proof-of-liabilities'],
        summary: 'The latest published root of the proof of liabilities',
        description:
          "The root hash of the Merkle-sum tree of every user's balances and its totals per currency. " +
          'Check your own proof (GET /portfolio/proof) against it. 404 NO_LIABILITY_ROOT before the first publication.',
        response: { 200: withEtagHeaders(LiabilityRoot), 304: ETAG_NOT_MODIFIED, ...errors },
      },
    },
    async () => {
      const root = await latestRoot(sql)
      if (!root) throw new NoLiabilityRootError()
      return rootOut(root)
    },
  )

  app.get<{ Querystring: RootsQueryValue }>(
    '/proof-of-liabilities/roots',
    {
      config: { etag: { maxAgeS: PROOF_MAX_AGE_S } },
      schema: {
        tags: ['proof-of-liabilities'],
        summary: 'Every published root, newest first',
        description: `Cursor pagination: pass nextCursor back as cursor; limit 1..${ROOTS_PAGE_LIMIT_MAX} (default ${ROOTS_PAGE_LIMIT_DEFAULT}).`,
        querystring: RootsQuery,
        response: { 200: withEtagHeaders(RootsResponse), 304: ETAG_NOT_MODIFIED, 400: { $ref: 'ErrorBody#' } },
      },
    },
    async (request) => {
      const limit = pageLimit(request.query.limit, ROOTS_PAGE_LIMIT_DEFAULT, ROOTS_PAGE_LIMIT_MAX)
      const after = request.query.cursor === undefined ? undefined : decodeCursor(request.query.cursor)
      const rows = await listRoots(sql, { limit: limit + 1, after })
      const page = rows.slice(0, limit)
      const last = page.at(-1)
      return {
        items: page.map(rootOut),
        nextCursor:
          rows.length > limit && last ? encodeCursor({ created_at_text: last.createdAtText, id: last.id }) : null,
      }
    },
  )

  await app.register(async (scope) => {
    requireAuth(scope)
    scope.get(
      '/portfolio/proof',
      {
        schema: {
          tags: ['portfolio', 'proof-of-liabilities'],
          summary: "The caller's proof of liabilities: their leaf and its path to the latest root",
          description:
            'Verify it with @wh/client `verifyLiabilityProof(proof, root)` or `packages/client/src/cli/verify-proof.ts`. ' +
            '404 NOT_IN_LIABILITY_TREE when nothing is published or the caller held nothing when the latest root was built.',
          response: { 200: PortfolioProofResponse, ...errors },
        },
      },
      async (request) => {
        const { userId } = currentUser(request)
        const root = await latestRoot(sql)
        if (!root) throw new NotInLiabilityTreeError(null)
        const proof = await proofFromStore(sql, root, userId)
        if (!proof) throw new NotInLiabilityTreeError(root.id)
        return { root: rootOut(root), proof }
      },
    )
  })
}
