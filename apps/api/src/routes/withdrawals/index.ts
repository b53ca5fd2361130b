/**
 * Withdrawals (spec 4.2, 3.2, 8.2): the routes a user may withdraw by, a request that reserves
 * part of the free balance (202; the withdrawals tick sends it), and the caller's history.
 * docs/chains.md "Withdrawals" describes states, reserve and fees.
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
import { type Clock, fromBaseUnits, systemClock, toBaseUnits } from '@wh/core'
import type { Sql } from '@wh/db'
import { InsufficientFreeBalanceError, reserveWithdrawal } from '@wh/ledger'
import { type MarketNames, PriceUnavailableError as StalePriceError } from '@wh/market'
import { assertPlatformRunning } from '@wh/ops'
import type { ChainInfo, ChainName, DepositKeyring, TokenInfo } from '@wh/wallet'
import type { FastifyInstance } from 'fastify'
import type { Redis } from 'ioredis'
import type Type from 'typebox'
import { getAddress } from 'viem'
import { decodeCursor, encodeCursor, pageLimit } from '../../lib/page'
import { currentUser, requireAuth } from '../../plugins/auth'
import { type DestinationGuard, destinationGuard } from './destinations'
import {
  AmountNotStringError,
  IdempotencyKeyReusedError,
  InvalidDestinationError,
  PriceUnavailableError,
  TooManyOpenWithdrawalsError,
  UnknownRouteError,
  WithdrawalAboveMaximumError,
  WithdrawalBelowMinimumError,
} from './errors'
import { type FeeEstimator, gasLimitOf, rpcFeeEstimator } from './fees'
import { usdToBaseUnits } from './limits'
import { feedPriceSource, type PriceSource, WITHDRAWAL_PRICE_MAX_AGE_MS, type WithdrawalAsset } from './price'

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
  limits: { readonly minUsd: string; readonly maxUsd: string; readonly stoppedMaxUsd: string }
  /** the feed's latest index by default, refused when older than WITHDRAWAL_PRICE_MAX_AGE_MS */
  prices?: PriceSource
  /** Redis names of the feed (tests namespace them) */
  names?: MarketNames
  fees?: FeeEstimator
  destinations?: DestinationGuard
  clock?: Clock
}

interface WithdrawalRow {
  id: string
  state: 'requested' | 'sent' | 'failed'
  currency: string
  amount: string
  chain: string | null
  destination: string | null
  network_fee: string | null
  tx_hash: string | null
  idempotency_key: string | null
  failure_reason: string | null
  created_at: Date
  updated_at: Date
  sent_at: Date | null
  /** created_at as Postgres prints it (microseconds): the cursor's exact position */
  created_at_text: string
}

const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000'
/**
 * Withdrawals one user may have requested and not yet sent. Each waits its turn in the send queue;
 * the cap bounds what one account can put in front of everyone else's (docs/hostile-world.md
 * "Fair queues").
 */
export const WITHDRAWAL_OPEN_MAX_PER_USER = 10
const ETH_DECIMALS = 18
const DECIMALS: Record<string, number> = { USDC: 6, ETH: 18 }
const UNIQUE_VIOLATION = '23505'
/**
 * A destination as EIP-55. All-lowercase (or all-uppercase) hex has no checksum to check; mixed
 * case must be a valid EIP-55 checksum, else a typo would send money to a wrong address.
 */
export function normaliseDestination(input: string): string {
  const hex = input.slice(2)
  const unchecked = hex === hex.toLowerCase() || hex === hex.toUpperCase()
  let address: string
  try {
    address = getAddress(`0x${hex.toLowerCase()}`)
  } catch {
    throw new InvalidDestinationError('destination is not an address')
  }
  if (!unchecked && address !== input) throw new InvalidDestinationError('destination has a wrong EIP-55 checksum')
  if (address === ZERO_ADDRESS) throw new InvalidDestinationError('destination is the zero address')
  return address
}

const iso = (d: Date) => d.toISOString()

export default async function withdrawalRoutes(app: FastifyInstance, opts: WithdrawalRoutesOptions) {
  requireAuth(app)
  const { sql } = opts
  const clock = opts.clock ?? systemClock
  const prices =
    opts.prices ??
    feedPriceSource(opts.redis, {
      maxAgeMs: WITHDRAWAL_PRICE_MAX_AGE_MS,
      now: () => clock.now().getTime(),
      ...(opts.names && { names: opts.names }),
    })
  const fees = opts.fees ?? rpcFeeEstimator(opts.chains, () => clock.now().getTime())
  const destinations =
    opts.destinations ??
    destinationGuard({
      sql,
      chains: opts.chains,
      keyring: opts.keyring,
      now: () => clock.now().getTime(),
      log: app.log,
    })

  function tokenOf(chain: string, asset: string): { info: ChainInfo; token: TokenInfo } {
    const info = opts.chains.get(chain as ChainName)
    const token = info?.tokens.find((t) => t.symbol === asset)
    if (!info || !token) throw new UnknownRouteError(chain, asset)
    return { info, token }
  }

  /** The accepted range of an asset in base units, from the USD bounds at the current price. */
  async function boundsOf(asset: WithdrawalAsset, decimals: number) {
    let priceUsd: string
    try {
      priceUsd = await prices.usdPrice(asset)
    } catch (err) {
      // limits in USD are only as good as the price that converts them: never a price fixed in
      // code, never a stale one (docs/hostile-world.md "Limits use the real price")
      if (err instanceof StalePriceError) throw new PriceUnavailableError(asset)
      throw err
    }
    return {
      priceUsd,
      min: usdToBaseUnits(opts.limits.minUsd, priceUsd, decimals, 'up'),
      max: usdToBaseUnits(opts.limits.maxUsd, priceUsd, decimals, 'down'),
    }
  }

  const selectColumns = sql`id, state, currency, amount, chain, destination, network_fee, tx_hash, idempotency_key,
    failure_reason, created_at, updated_at, sent_at, created_at::text as created_at_text`

  async function byIdempotencyKey(userId: string, key: string): Promise<WithdrawalRow | undefined> {
    const rows = await sql<WithdrawalRow[]>`
      select ${selectColumns} from withdrawals where user_id = ${userId} and idempotency_key = ${key}`
    return rows[0]
  }

  function createdBody(row: WithdrawalRow) {
    const decimals = DECIMALS[row.currency] ?? 0
    return {
      id: row.id,
      state: row.state,
      chain: row.chain ?? '',
      asset: row.currency as WithdrawalAsset,
      amount: fromBaseUnits(BigInt(row.amount), decimals),
      destination: row.destination ?? '',
      createdAt: iso(row.created_at),
    }
  }

  /** A replay must be the same request: another body under a used key is refused, not merged. */
  function assertSameRequest(row: WithdrawalRow, req: { chain: string; asset: string; amount: bigint; to: string }) {
    if (
      row.chain !== req.chain ||
      row.currency !== req.asset ||
      BigInt(row.amount) !== req.amount ||
      row.destination !== req.to
    )
      throw new IdempotencyKeyReusedError()
  }

  app.get(
    '/withdrawals/routes',
    {
      schema: {
        tags: ['withdrawals'],
        summary: 'Chains and assets a withdrawal can take, with bounds and a network fee estimate',
        response: { 200: RoutesResponse },
      },
    },
    async () => {
      const chains = [...opts.chains.values()]
      // the chains' fee reads in parallel: one slow RPC bounds the answer, not their sum
      const feeByChain = await Promise.all(chains.map((c) => fees.feePerGasWei(c.name)))
      const routes = []
      // one price read per asset, not per chain; an asset without a recent price is listed
      // without bounds (its requests answer 503 PRICE_UNAVAILABLE)
      const boundsByAsset = new Map<string, Promise<Awaited<ReturnType<typeof boundsOf>> | undefined>>()
      const boundsOnce = (asset: WithdrawalAsset, decimals: number) => {
        let b = boundsByAsset.get(asset)
        if (!b) {
          b = boundsOf(asset, decimals).catch((err: unknown) => {
            if (err instanceof PriceUnavailableError) return undefined
            throw err
          })
          boundsByAsset.set(asset, b)
        }
        return b
      }
      for (const [i, info] of chains.entries()) {
        const feePerGasWei = feeByChain[i]
        for (const token of info.tokens) {
          const asset = token.symbol
          const bounds = await boundsOnce(asset, token.decimals)
          const gasLimit = gasLimitOf(asset)
          routes.push({
            chain: info.name,
            chainId: info.chainId,
            asset,
            decimals: token.decimals,
            contract: token.contract,
            minUsd: opts.limits.minUsd,
            maxUsd: opts.limits.maxUsd,
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
          })
        }
      }
      return { routes }
    },
  )

  app.post<{
    Body: Type.Static<typeof CreateWithdrawalBody>
    Headers: Type.Static<typeof CreateWithdrawalHeaders>
  }>(
    '/withdrawals',
    {
      schema: {
        tags: ['withdrawals'],
        summary: 'Request a withdrawal: reserves the amount from the free balance; a background tick sends it',
        description:
          'An Idempotency-Key header (at most 128 printable characters) makes a retried request answer the ' +
          'same withdrawal with the same 202. Amounts are decimal strings in the asset (at most its decimals).',
        body: CreateWithdrawalBody,
        headers: CreateWithdrawalHeaders,
        response: {
          202: CreatedWithdrawal,
          400: { $ref: 'ErrorBody#' },
          422: { $ref: 'ErrorBody#' },
          503: { $ref: 'ErrorBody#' },
        },
      },
      // the server's ajv coerces a JSON number to a string; an amount must arrive as a decimal string
      preValidation: async (request) => {
        const amount = (request.body as { amount?: unknown } | undefined)?.amount
        if (amount !== undefined && typeof amount !== 'string') throw new AmountNotStringError()
      },
    },
    async (request, reply) => {
      const { userId } = currentUser(request)
      const body = request.body
      const key = request.headers['idempotency-key']
      const { token } = tokenOf(body.chain, body.asset)
      const asset = token.symbol
      // 'exact': more decimals than the asset has is a 400 INVALID_AMOUNT, never silently rounded
      const amount = toBaseUnits(body.amount, token.decimals, 'exact')
      const to = normaliseDestination(body.destination)
      const request_ = { chain: body.chain, asset, amount, to }

      if (key !== undefined) {
        const earlier = await byIdempotencyKey(userId, key)
        if (earlier) {
          assertSameRequest(earlier, request_)
          return reply.code(202).send(createdBody(earlier))
        }
      }
      await destinations.check({ userId, chain: body.chain, asset, amount, destination: to as `0x${string}` })
      const { min, max, priceUsd } = await boundsOf(asset, token.decimals)
      // a zero amount is below any minimum, even a WITHDRAWAL_MIN_USD of 0
      if (amount <= 0n || amount < min)
        throw new WithdrawalBelowMinimumError(fromBaseUnits(min, token.decimals), asset, opts.limits.minUsd)
      if (amount > max)
        throw new WithdrawalAboveMaximumError(fromBaseUnits(max, token.decimals), asset, opts.limits.maxUsd)
      // while the platform is stopped (a solvency deficit under review) only small withdrawals pass
      if (amount > usdToBaseUnits(opts.limits.stoppedMaxUsd, priceUsd, token.decimals, 'down'))
        await assertPlatformRunning(sql, `a withdrawal above ${opts.limits.stoppedMaxUsd} USD`)

      try {
        // one transaction: the reserve (locks the user's transit balance, inserts 'requested') and
        // the row's route and key, so no reader ever sees a request without its destination
        const row = await sql.begin(async (tx) => {
          const { withdrawalId } = await reserveWithdrawal(tx, { userId, currency: asset, amount })
          // counted after the reserve, which holds the user's transit lock: concurrent requests of
          // one currency queue on it, so the cap holds under a burst
          const [{ open } = { open: 0 }] = await tx<{ open: number }[]>`
            select count(*)::int as open from withdrawals where user_id = ${userId} and state = 'requested'`
          if (open > WITHDRAWAL_OPEN_MAX_PER_USER) throw new TooManyOpenWithdrawalsError(WITHDRAWAL_OPEN_MAX_PER_USER)
          const rows = await tx<WithdrawalRow[]>`
            update withdrawals set chain = ${body.chain}, destination = ${to}, idempotency_key = ${key ?? null},
              updated_at = now()
            where id = ${withdrawalId}
            returning ${selectColumns}`
          return rows[0] as WithdrawalRow
        })
        return reply.code(202).send(createdBody(row))
      } catch (err) {
        // A racing request with the same key won: it either committed first (unique violation
        // here), or its reserve spent the balance this one waited for. Answer its withdrawal.
        const raced =
          key !== undefined &&
          ((err as { code?: string }).code === UNIQUE_VIOLATION || err instanceof InsufficientFreeBalanceError)
        if (raced) {
          const winner = await byIdempotencyKey(userId, key)
          if (winner) {
            assertSameRequest(winner, request_)
            return reply.code(202).send(createdBody(winner))
          }
        }
        throw err
      }
    },
  )

  app.get<{ Querystring: Type.Static<typeof ListQuery> }>(
    '/withdrawals',
    {
      schema: {
        tags: ['withdrawals'],
        summary: "The caller's withdrawals, newest first",
        description: 'Cursor pagination: pass nextCursor back as cursor; limit 1..100 (default 20).',
        querystring: ListQuery,
        response: { 200: ListResponse, 400: { $ref: 'ErrorBody#' } },
      },
    },
    async (request) => {
      const { userId } = currentUser(request)
      const limit = pageLimit(request.query.limit, PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX)
      const after = request.query.cursor === undefined ? undefined : decodeCursor(request.query.cursor)
      const rows = await sql<WithdrawalRow[]>`
        select ${selectColumns} from withdrawals
        where user_id = ${userId}
          ${after ? sql`and (created_at, id) < (${after.createdAt}::timestamptz, ${after.id}::uuid)` : sql``}
        order by created_at desc, id desc
        limit ${limit + 1}`
      const page = rows.slice(0, limit)
      const last = page[page.length - 1]
      return {
        items: page.map((r) => {
          const decimals = DECIMALS[r.currency] ?? 0
          return {
            id: r.id,
            state: r.state,
            chain: r.chain,
            asset: r.currency,
            amount: fromBaseUnits(BigInt(r.amount), decimals),
            destination: r.destination,
            networkFee: r.network_fee === null ? null : fromBaseUnits(BigInt(r.network_fee), ETH_DECIMALS),
            networkFeeAsset: 'ETH' as const,
            txHash: r.tx_hash,
            failureReason: r.failure_reason,
            createdAt: iso(r.created_at),
            updatedAt: iso(r.updated_at),
            sentAt: r.sent_at ? iso(r.sent_at) : null,
          }
        }),
        nextCursor: rows.length > limit && last ? encodeCursor(last) : null,
      }
    },
  )
}
