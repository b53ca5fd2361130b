/**
 * Withdrawals (spec 4.2, 3.2, 8.2): the routes a user may withdraw by, a request that reserves
 * part of the free balance (202; its job sends it at once, the withdrawals tick sweeps), and the caller's history. Each
 * handler parses, calls @wh/withdrawals (packages/withdrawals: the request's rules in request.ts,
 * the reads in rows.ts) and maps the row to its answer. docs/chains.md "Withdrawals" describes
 * states, reserve and fees.
 */

import {
  CreatedWithdrawal,
  CreateWithdrawalBody,
  CreateWithdrawalHeaders,
  ListQuery,
  ListResponse,
  PAGE_LIMIT_DEFAULT,
  PAGE_LIMIT_MAX,
  RoutesResponse,
} from '@wh/api-schemas/withdrawals'
import { type Clock, decimalsOf, fromBaseUnits, systemClock } from '@wh/core'
import type { Sql } from '@wh/db'
import { feedPriceSource, type MarketNames, type PriceSource } from '@wh/market'
import { assertPlatformRunning } from '@wh/ops'
import { type ChainInfo, type ChainName, type DepositKeyring, type FeeEstimator, rpcFeeEstimator } from '@wh/wallet'
import {
  AmountNotStringError,
  type DestinationGuard,
  destinationGuard,
  requestWithdrawal,
  WITHDRAWAL_PRICE_MAX_AGE_MS,
  WITHDRAWAL_REQUESTS_PER_MINUTE,
  type WithdrawalLimits,
  type WithdrawalRequestDeps,
  type WithdrawalRouteInfo,
  type WithdrawalRow,
  withdrawalRoutes,
  withdrawalsPage,
} from '@wh/withdrawals'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import type { Redis } from 'ioredis'
import type Type from 'typebox'
import type { Jobs } from '../../lib/jobs'
import { decodeCursor, encodeCursor, pageLimit } from '../../lib/page'
import { currentUser, requireAuth } from '../../plugins/auth'

export interface WithdrawalRoutesOptions {
  sql: Sql
  /** where the price feed keeps the latest index (docs/market-data.md) */
  redis: Redis
  chains: ReadonlyMap<ChainName, ChainInfo>
  /** public-only keyring: to refuse the caller's own deposit address as a destination */
  keyring: DepositKeyring
  /**
   * config.withdrawal: WITHDRAWAL_MIN_USD / WITHDRAWAL_MAX_USD, and PLATFORM_STOP_WITHDRAWAL_MAX_USD
   * (the largest accepted while the platform is stopped), decimal USD strings
   */
  limits: WithdrawalLimits
  /** the feed's latest index by default, refused when older than WITHDRAWAL_PRICE_MAX_AGE_MS */
  prices?: PriceSource
  /** Redis names of the feed (tests namespace them) */
  names?: MarketNames
  fees?: FeeEstimator
  /** the `withdrawal.send` job each accepted request adds after its commit (none: the tick alone sends) */
  jobs?: Jobs
  destinations?: DestinationGuard
  clock?: Clock
}

const ETH_DECIMALS = decimalsOf('ETH') as number

const iso = (d: Date) => d.toISOString()
const amountOf = (row: WithdrawalRow) => fromBaseUnits(BigInt(row.amount), decimalsOf(row.currency) ?? 0)

/** POST /withdrawals' 202 body. */
function createdBody(row: WithdrawalRow) {
  return {
    id: row.id,
    state: row.state,
    chain: row.chain ?? '',
    asset: row.currency as 'USDC' | 'ETH',
    amount: amountOf(row),
    destination: row.destination ?? '',
    createdAt: iso(row.createdAt),
  }
}

/** An item of GET /withdrawals/routes. */
function routeItem({ info, token, bounds, gasLimit, feePerGasWei }: WithdrawalRouteInfo, limits: WithdrawalLimits) {
  return {
    chain: info.name,
    chainId: info.chainId,
    asset: token.symbol,
    decimals: token.decimals,
    contract: token.contract,
    minUsd: limits.minUsd,
    maxUsd: limits.maxUsd,
    priceAvailable: bounds !== undefined,
    priceUsd: bounds?.priceUsd ?? null,
    minAmount: bounds ? fromBaseUnits(bounds.min, token.decimals) : null,
    maxAmount: bounds ? fromBaseUnits(bounds.max, token.decimals) : null,
    networkFee:
      feePerGasWei === undefined
        ? { available: false, asset: 'ETH' as const, gasLimit: gasLimit.toString() }
        : {
            available: true,
            asset: 'ETH' as const,
            estimate: fromBaseUnits(gasLimit * feePerGasWei, ETH_DECIMALS),
            gasLimit: gasLimit.toString(),
            maxFeePerGasWei: feePerGasWei.toString(),
          },
  }
}

/** An item of GET /withdrawals. */
function listItem(row: WithdrawalRow) {
  return {
    id: row.id,
    state: row.state,
    chain: row.chain,
    asset: row.currency,
    amount: amountOf(row),
    destination: row.destination,
    networkFee: row.networkFee === null ? null : fromBaseUnits(BigInt(row.networkFee), ETH_DECIMALS),
    networkFeeAsset: 'ETH' as const,
    txHash: row.txHash,
    failureReason: row.failureReason,
    failureCode: row.state === 'failed' ? row.lastErrorCode : null,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
    sentAt: row.sentAt ? iso(row.sentAt) : null,
  }
}

const routesSchema = {
  tags: ['withdrawals'],
  summary: 'Chains and assets a withdrawal can take, with bounds and a network fee estimate',
  response: { 200: RoutesResponse },
}
const createSchema = {
  tags: ['withdrawals'],
  summary: 'Request a withdrawal: reserves the amount from the free balance; the worker sends it at once',
  description:
    'An Idempotency-Key header (at most 128 printable characters) makes a retried request answer the ' +
    'same withdrawal with the same 202. Amounts are decimal strings in the asset (at most its decimals).',
  body: CreateWithdrawalBody,
  headers: CreateWithdrawalHeaders,
  response: {
    202: CreatedWithdrawal,
    400: { $ref: 'ErrorBody#' },
    422: { $ref: 'ErrorBody#' },
    429: { $ref: 'ErrorBody#' },
    503: { $ref: 'ErrorBody#' },
  },
}
const listSchema = {
  tags: ['withdrawals'],
  summary: "The caller's withdrawals, newest first",
  description: 'Cursor pagination: pass nextCursor back as cursor; limit 1..100 (default 20).',
  querystring: ListQuery,
  response: { 200: ListResponse, 400: { $ref: 'ErrorBody#' } },
}

/** What the withdrawal request needs: the feed's price, the destination guard, the platform stop. */
function requestDeps(opts: WithdrawalRoutesOptions, clock: Clock, log: FastifyBaseLogger): WithdrawalRequestDeps {
  const { sql } = opts
  return {
    sql,
    chains: opts.chains,
    limits: opts.limits,
    prices:
      opts.prices ??
      feedPriceSource(opts.redis, {
        maxAgeMs: WITHDRAWAL_PRICE_MAX_AGE_MS,
        now: () => clock.now().getTime(),
        ...(opts.names && { names: opts.names }),
      }),
    destinations:
      opts.destinations ??
      destinationGuard({
        sql,
        chains: opts.chains,
        keyring: opts.keyring,
        now: () => clock.now().getTime(),
        log,
      }),
    assertPlatformRunning: (what) => assertPlatformRunning(sql, what),
    takeRequestSlot: (userId) => takeRequestSlot(opts.redis, userId, clock),
  }
}

/** Redis key prefix of the per-user withdrawal request counters (one key per user and minute). */
export const WITHDRAWAL_REQUESTS_KEY_PREFIX = 'withdrawal-requests:'

/**
 * One of the user's WITHDRAWAL_REQUESTS_PER_MINUTE in this minute (a Redis counter shared by every
 * API process, one round trip). Abuse control, not accounting: when Redis does not answer, the
 * request is not limited (the reserve and the open cap still hold).
 */
async function takeRequestSlot(redis: Redis, userId: string, clock: Clock): Promise<boolean> {
  const key = `${WITHDRAWAL_REQUESTS_KEY_PREFIX}${userId}:${Math.floor(clock.now().getTime() / 60_000)}`
  try {
    const replies = await redis.multi().incr(key).pexpire(key, 120_000).exec()
    const count = Number(replies?.[0]?.[1] ?? 0)
    return count <= WITHDRAWAL_REQUESTS_PER_MINUTE
  } catch {
    return true
  }
}

export default async function withdrawalRoutesPlugin(app: FastifyInstance, opts: WithdrawalRoutesOptions) {
  requireAuth(app)
  const { sql } = opts
  const clock = opts.clock ?? systemClock
  const fees = opts.fees ?? rpcFeeEstimator(opts.chains, () => clock.now().getTime())
  const deps = requestDeps(opts, clock, app.log)

  app.get(
    '/withdrawals/routes',
    {
      schema: routesSchema,
    },
    async () => ({ routes: (await withdrawalRoutes(deps, fees)).map((r) => routeItem(r, opts.limits)) }),
  )

  app.post<{
    Body: Type.Static<typeof CreateWithdrawalBody>
    Headers: Type.Static<typeof CreateWithdrawalHeaders>
  }>(
    '/withdrawals',
    {
      schema: createSchema,
      // the server's ajv coerces a JSON number to a string; an amount must arrive as a decimal string
      preValidation: async (request) => {
        const amount = (request.body as { amount?: unknown } | undefined)?.amount
        if (amount !== undefined && typeof amount !== 'string') throw new AmountNotStringError()
      },
    },
    async (request, reply) => {
      const { chain, asset, amount, destination } = request.body
      const { userId } = currentUser(request)
      const row = await requestWithdrawal(deps, {
        userId,
        chain,
        asset,
        amount,
        destination,
        idempotencyKey: request.headers['idempotency-key'],
      })
      // committed: the worker sends it now (a replay of a row already sent has nothing to do)
      if (row.state === 'requested') await opts.jobs?.afterCommit(request, 'withdrawal.send', row.id, userId)
      return reply.code(202).send(createdBody(row))
    },
  )

  app.get<{ Querystring: Type.Static<typeof ListQuery> }>(
    '/withdrawals',
    {
      schema: listSchema,
    },
    async (request) => {
      const limit = pageLimit(request.query.limit, PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX)
      const after = request.query.cursor === undefined ? undefined : decodeCursor(request.query.cursor)
      const page = await withdrawalsPage(sql, currentUser(request).userId, { limit, after })
      return {
        items: page.items.map(listItem),
        nextCursor: page.next ? encodeCursor({ created_at_text: page.next.createdAt, id: page.next.id }) : null,
      }
    },
  )
}
