/**
 * GET /solvency (docs/solvency.md "Public solvency"): the latest complete solvency run's totals per
 * currency, when it ran, and the platform's addresses and exchange account its assets were read
 * from, so anyone can check the assets where they are; the proof of liabilities (index.ts) lets
 * each user check the other side. Public, no user's data (@wh/solvency `publicSolvency`), tagged
 * and readable from any origin (plugins/etag.ts, plugins/cors.ts). 404 NO_SOLVENCY_RUN before the
 * first complete run.
 */
import { PublicSolvencyResponse } from '@wh/api-schemas/solvency'
import { AppError, type Clock, decimalsOf, fromBaseUnits } from '@wh/core'
import type { Sql } from '@wh/db'
import { latestRun, publicSolvency } from '@wh/solvency'
import type { FastifyInstance } from 'fastify'
import { ETAG_NOT_MODIFIED, withEtagHeaders } from '../../plugins/etag'

/** Seconds a browser or a CDN may keep the answer (a run every SOLVENCY_EVERY_SECONDS, 300 by default). */
export const SOLVENCY_MAX_AGE_S = 60

/**
 * How long one process keeps the answer it built (a run every SOLVENCY_EVERY_SECONDS): a public route that reads
 * a run's every leg must not read them for each of a flood of requests. Requests meanwhile share one read.
 */
export const SOLVENCY_KEEP_MS = 5_000

export class NoSolvencyRunError extends AppError {
  constructor() {
    super({ code: 'NO_SOLVENCY_RUN', statusCode: 404, message: 'no complete solvency run has been stored yet' })
  }
}

const decimal = (units: bigint, currency: string) => fromBaseUnits(units, decimalsOf(currency) ?? 0)
const decimals = (byKind: Readonly<Record<string, bigint>>, currency: string) =>
  Object.fromEntries(Object.entries(byKind).map(([k, v]) => [k, decimal(v, currency)]))

export async function solvencyRoute(app: FastifyInstance, opts: { sql: Sql; clock: Clock }) {
  // the answer being built or kept, and when it was asked for; a failed read or no run yet is not kept
  let kept: { at: number; body: Promise<SolvencyBody> } | undefined
  const answer = (): Promise<SolvencyBody> => {
    const now = opts.clock.now().getTime()
    if (kept && now - kept.at < SOLVENCY_KEEP_MS) return kept.body
    const body = solvencyBody(opts.sql)
    const entry = { at: now, body }
    kept = entry
    body.catch(() => {
      if (kept === entry) kept = undefined
    })
    return body
  }
  app.get(
    '/solvency',
    {
      config: { etag: { maxAgeS: SOLVENCY_MAX_AGE_S } },
      schema: {
        tags: ['proof-of-liabilities'],
        summary: "The latest complete solvency run: what the platform holds against what it owes, and where it's held",
        description:
          'Per currency: assets, liabilities and surplus, by kind; the platform wallets and the exchange account ' +
          'the assets were read from (read them yourself); no user data. With your proof of liabilities ' +
          '(GET /portfolio/proof) you check both sides. 404 NO_SOLVENCY_RUN before the first complete run. An ' +
          'extension of docs/contract.md.',
        response: {
          200: withEtagHeaders(PublicSolvencyResponse),
          304: ETAG_NOT_MODIFIED,
          404: { $ref: 'ErrorBody#' },
        },
      },
    },
    answer,
  )
}

type SolvencyBody = Awaited<ReturnType<typeof solvencyBody>>

/** The public body of the latest complete run; NoSolvencyRunError before the first. */
async function solvencyBody(sql: Sql) {
  const run = await latestRun(sql, { completeOnly: true })
  if (!run) throw new NoSolvencyRunError()
  const p = publicSolvency(run)
  return {
    runId: p.runId,
    startedAt: p.startedAt.toISOString(),
    finishedAt: p.finishedAt.toISOString(),
    totals: p.totals.map((t) => ({
      currency: t.currency,
      decimals: decimalsOf(t.currency) ?? 0,
      assets: decimal(t.assets, t.currency),
      liabilities: decimal(t.liabilities, t.currency),
      surplus: decimal(t.surplus, t.currency),
      assetsByKind: decimals(t.assetsByKind, t.currency),
      liabilitiesByKind: decimals(t.liabilitiesByKind, t.currency),
    })),
    addresses: [...p.addresses],
    exchangeAccount: p.exchangeAccount,
  }
}
