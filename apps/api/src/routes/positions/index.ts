/**
 * Positions (spec 4.2; docs/trading.md): a request to sell an option leg (202; its job funds and
 * places it at once, the placing tick sweeps), the caller's positions, and cancelling one or buying
 * a sold one back ("Buying a leg back": quoted here from the exchange's ticker, bought by its job).
 */

import {
  CancelQuery,
  CancelResponse,
  CreatedPosition,
  CreatePositionBody,
  IdempotencyHeaders,
  ListQuery,
  ListResponse,
  PositionParams,
} from '@wh/api-schemas/positions'
import { AppError, type Clock, decimalsOf, fromBaseUnits, systemClock, toBaseUnits } from '@wh/core'
import type { Sql } from '@wh/db'
import type { RowJobName } from '@wh/jobs'
import { assertPlatformRunning } from '@wh/ops'
import {
  type BuyBackQuote,
  type ChainReader,
  checkFeeShare,
  collateralCurrencyOf,
  endPosition,
  type PositionEnd,
  type PriceReader,
  type QuoteSettings,
  QuoteUnavailableError,
  requestPosition,
  SettingsNotForLegError,
  startWheel,
  type TradingProfile,
} from '@wh/trading'
import type { FastifyInstance } from 'fastify'
import type Type from 'typebox'
import type { Jobs } from '../../lib/jobs'
import { currentUser, requireAuth } from '../../plugins/auth'
import type { PublicExchange } from '../quotes/chain'
import { settingsInEffect } from '../quotes/index'
import { exchangeTickerPrices } from './prices'
import { E18, listPositions, USDC } from './read'

export interface PositionRoutesOptions {
  sql: Sql
  /** the active TRADING_PROFILE: a wheel's default settings and their bounds (docs/trading.md "Wheel settings") */
  profile: TradingProfile
  clock?: Clock
  /** EXCHANGE_HTTP_URL: buy-back quotes read the instrument's ticker there (public, no keys) */
  exchange?: PublicExchange
  /** overrides the price source of buy-back quotes (default: the exchange's ticker) */
  prices?: PriceReader
  /** the fee-share check of a new position (docs/trading.md "Economics"); none: not checked */
  feeShare?: { chain: ChainReader; settings: QuoteSettings }
  /** the jobs a 202 adds after its commit (docs/architecture.md "Accepted work: one job per 202"); none: the ticks alone */
  jobs?: Jobs
}

class AmountNotStringError extends AppError {
  constructor() {
    super({ code: 'INVALID_AMOUNT', statusCode: 400, message: 'amount must be a decimal string' })
  }
}

function quoteBody(q: BuyBackQuote) {
  return {
    pricePerUnit: fromBaseUnits(q.priceE18, E18),
    amount: fromBaseUnits(q.amountE18, E18),
    cost: fromBaseUnits(q.cost, USDC),
    limitPerUnit: fromBaseUnits(q.limitE18, E18),
    quotedAt: q.quotedAt.toISOString(),
  }
}

/** DELETE /positions/:id's answer for what endPosition did: 200 when it is over, 202 when a tick finishes it. */
function endResponse(id: string, end: PositionEnd): { status: 200 | 202; body: Type.Static<typeof CancelResponse> } {
  switch (end.kind) {
    case 'cancelled':
    case 'cancel_requested':
      return { status: end.kind === 'cancelled' ? 200 : 202, body: { id, action: 'cancel', ...end.cancel } }
    case 'closing': {
      const { outcome, state, quote } = end.close
      return { status: 202, body: { id, action: 'close', outcome, state, quote: quoteBody(quote) } }
    }
    case 'stopped':
    case 'stopping': {
      const { state, closeQuote } = end.stop
      const body = {
        id,
        action: 'stop' as const,
        outcome: state,
        state,
        ...(closeQuote && { quote: quoteBody(closeQuote) }),
      }
      return { status: end.kind === 'stopped' ? 200 : 202, body }
    }
  }
}

/**
 * The jobs an end leaves work for (a 202): a placing leg's cancel, a sold leg's buy-back, a stopping
 * wheel's stop (whose job ends its leg first), also when cancelling a wheel's leg stops the wheel.
 */
function jobsAfterEnd(id: string, end: PositionEnd): [RowJobName, string][] {
  switch (end.kind) {
    case 'cancelled':
    case 'cancel_requested': {
      const jobs: [RowJobName, string][] = end.kind === 'cancel_requested' ? [['position.cancel', id]] : []
      if (end.cancel.wheel?.state === 'stopping') jobs.push(['wheel.stop', end.cancel.wheel.id])
      return jobs
    }
    case 'closing':
      return [['position.close', id]]
    case 'stopping':
      return [['wheel.stop', id]]
    case 'stopped':
      return []
  }
}

const createSchema = {
  tags: ['positions'],
  summary: 'Sell an option leg: a cash-secured put or a covered call (202; the worker funds and places it at once)',
  description:
    'Commits `amount` of collateral: what the subaccount already holds unclaimed first, the rest from the ' +
    'free balance (422 INSUFFICIENT_COLLATERAL when both together fall short). 422 SELLING_PAUSED while a ' +
    'signal pauses that side, 422 SUBACCOUNT_STOPPED while reconciliation stopped the subaccount, 503 ' +
    'PLATFORM_STOPPED while the platform is stopped (a solvency deficit under review). Fees above ' +
    'MAX_FEE_SHARE_BPS of the premium at the current marks (as POST /quotes computes them): 422 ' +
    'FEES_EXCEED_PREMIUM_SHARE with the figures in `details` when FEE_SHARE_POLICY=refuse (503 QUOTE_UNAVAILABLE ' +
    'when the exchange cannot be read then), else `warning`. A wheel may carry ' +
    '`settings` (docs/trading.md "Wheel settings"; 422 SETTING_OUT_OF_BOUNDS outside the profile\'s bounds, ' +
    '400 SETTINGS_ONLY_FOR_WHEEL on a put or a call). An ' +
    'Idempotency-Key header makes a retried request answer the same position.',
  body: CreatePositionBody,
  headers: IdempotencyHeaders,
  response: {
    202: CreatedPosition,
    400: { $ref: 'ErrorBody#' },
    409: { $ref: 'ErrorBody#' },
    422: { $ref: 'ErrorBody#' },
    503: { $ref: 'ErrorBody#' },
  },
}
const listSchema = {
  tags: ['positions'],
  summary: "The caller's positions, newest first, with fills, premium, fees and realised P&L",
  querystring: ListQuery,
  response: { 200: ListResponse, 400: { $ref: 'ErrorBody#' } },
}
const deleteSchema = {
  tags: ['positions'],
  summary:
    'Cancel a position (at once when nothing is at the exchange, else its resting orders: 202), buy a sold ' +
    'one back (202 with the quote), or stop a wheel',
  description:
    'An open (sold) leg is quoted from the exchange (the best ask, or the mark plus 5 % without one) and ' +
    'becomes `closing`: the placing tick sends one immediate-or-cancel buy at the quote plus 2 %. A second ' +
    'DELETE while closing answers the same quote. 503 QUOTE_UNAVAILABLE when the exchange cannot be read, ' +
    '409 CLOSE_UNAVAILABLE for an expired leg, 422 SUBACCOUNT_STOPPED while the subaccount is stopped.',
  params: PositionParams,
  querystring: CancelQuery,
  response: {
    200: CancelResponse,
    202: CancelResponse,
    400: { $ref: 'ErrorBody#' },
    404: { $ref: 'ErrorBody#' },
    409: { $ref: 'ErrorBody#' },
    422: { $ref: 'ErrorBody#' },
    503: { $ref: 'ErrorBody#' },
  },
}

/**
 * POST /positions: the amount in the collateral's base units (400 beyond its decimals), the platform
 * stop, the fee-share check (docs/trading.md "Economics"), then a leg or a wheel.
 */
async function createPosition(
  opts: PositionRoutesOptions,
  clock: Clock,
  userId: string,
  body: Type.Static<typeof CreatePositionBody>,
  key: string | undefined,
) {
  const { sql, profile } = opts
  const { asset, side, settings } = body
  if (settings && side !== 'wheel') throw new SettingsNotForLegError()
  const legSide = side === 'wheel' ? 'put' : side
  const currency = collateralCurrencyOf(asset, legSide)
  // more decimals than the collateral has is a 400, never silently rounded
  const amount = toBaseUnits(body.amount, decimalsOf(currency) ?? 0, 'exact')
  // no new position while an operator reviews a solvency deficit (docs/solvency.md "The platform stop")
  await assertPlatformRunning(sql, 'opening a position')
  // fees above MAX_FEE_SHARE_BPS of the premium: refused (422) or a warning, per FEE_SHARE_POLICY
  // a wheel's first leg is checked as its settings choose it (422 out of bounds before anything is read)
  const inEffect = settingsInEffect(body, profile)
  const fee = opts.feeShare
    ? await checkFeeShare(
        opts.feeShare.chain,
        { asset, side, amount, ...(inEffect && { settings: inEffect }) },
        opts.feeShare.settings,
        clock.now().getTime(),
      )
    : undefined
  const req = { userId, asset, amount, ...(key && { idempotencyKey: key }) }
  const { leg: p, wheelId } =
    side === 'wheel'
      ? await startWheel(sql, req, settings && { input: settings, profile })
      : { leg: await requestPosition(sql, { ...req, side }), wheelId: undefined }
  const decimals = decimalsOf(p.collateralCurrency) ?? 0
  return {
    id: p.id,
    state: p.state,
    asset,
    side: legSide,
    collateralCurrency: p.collateralCurrency,
    collateral: fromBaseUnits(p.collateralAmount, decimals),
    funded: fromBaseUnits(p.funded, decimals),
    ...(wheelId && { wheelId }),
    ...(fee && { warning: fee }),
  }
}

export default async function positionRoutes(app: FastifyInstance, opts: PositionRoutesOptions) {
  requireAuth(app)
  const { sql, profile } = opts
  const clock = opts.clock ?? systemClock
  const prices: PriceReader =
    opts.prices ??
    (opts.exchange
      ? exchangeTickerPrices(opts.exchange)
      : async (instrument) => {
          throw new QuoteUnavailableError(instrument)
        })

  app.post<{ Body: Type.Static<typeof CreatePositionBody>; Headers: Type.Static<typeof IdempotencyHeaders> }>(
    '/positions',
    {
      schema: createSchema,
      preValidation: async (request) => {
        const amount = (request.body as { amount?: unknown } | undefined)?.amount
        if (amount !== undefined && typeof amount !== 'string') throw new AmountNotStringError()
      },
    },
    async (request, reply) => {
      const key = request.headers['idempotency-key']
      const { userId } = currentUser(request)
      const created = await createPosition(opts, clock, userId, request.body, key)
      // committed: the worker funds and places it now (a replayed request adds nothing)
      if (created.state === 'requested' || created.state === 'funding')
        await opts.jobs?.afterCommit(request, 'position.advance', created.id, userId)
      return reply.code(202).send(created)
    },
  )

  app.get<{ Querystring: Type.Static<typeof ListQuery> }>(
    '/positions',
    {
      schema: listSchema,
    },
    async (request) => listPositions(sql, currentUser(request).userId, request.query, profile),
  )

  app.delete<{ Params: Type.Static<typeof PositionParams>; Querystring: Type.Static<typeof CancelQuery> }>(
    '/positions/:id',
    {
      schema: deleteSchema,
    },
    async (request, reply) => {
      const { userId } = currentUser(request)
      const { id } = request.params
      const mode = request.query.mode ?? 'after_cycle'
      const end = await endPosition(sql, userId, id, { prices, mode, clock })
      // committed: what is left for later starts now (a replayed DELETE finds the same job)
      for (const [name, rowId] of jobsAfterEnd(id, end)) await opts.jobs?.afterCommit(request, name, rowId, userId)
      const { status, body } = endResponse(id, end)
      return reply.code(status).send(body)
    },
  )
}
