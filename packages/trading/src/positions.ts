/**
 * Positions (docs/trading.md "Position states", "Collateral and encumbrance", "Buying a leg back"):
 * requesting one and closing (buying back) a sold one, shared by the API (POST/DELETE /positions),
 * the wheel's stop and the wheel runner; cancelling one is position-cancel.ts, the DELETE's choice
 * between them position-end.ts. The rows are written by position-store.ts, the one writer of
 * `positions`.
 */
import {
  AppError,
  BusinessRuleError,
  CASH_CURRENCY,
  InvalidAmountError,
  maxBigint,
  minBigint,
  NotFoundError,
  type Underlying,
} from '@wh/core'
import type { Sql } from '@wh/db'
import { InsufficientFreeBalanceError, type Queryable, userSub } from '@wh/ledger'
import { ensureSubaccount, reserveFundingTransfer } from '@wh/subaccounts'
import { type BuyBackQuote, buyBackQuote, costUsdcUp, quotedPriceOf, type TickerPrices } from './placing'
import { insertPosition, startClosing } from './position-store'
import { LIVE_POSITION_STATES, type PositionSide, type PositionState } from './position-types'

/** An Idempotency-Key already used for another request (another asset, side or amount). */
export class IdempotencyKeyReusedError extends BusinessRuleError {
  constructor() {
    super('IDEMPOTENCY_KEY_REUSED', 'this Idempotency-Key was used for a different position request')
  }
}

export class SellingPausedError extends BusinessRuleError {
  constructor(asset: string, side: string, reason: string | null) {
    super('SELLING_PAUSED', `selling ${side}s on ${asset} is paused by a signal${reason ? `: ${reason}` : ''}`, {
      asset,
      side,
    })
  }
}
export class SubaccountStoppedError extends BusinessRuleError {
  constructor(asset: string, reason: string | null) {
    super('SUBACCOUNT_STOPPED', `trading on your ${asset} subaccount is stopped${reason ? `: ${reason}` : ''}`, {
      asset,
    })
  }
}
export class ReleaseInProgressError extends BusinessRuleError {
  constructor(asset: string) {
    super('RELEASE_IN_PROGRESS', `a release of your ${asset} subaccount is open: no new position until it ends`, {
      asset,
    })
  }
}
export class InsufficientCollateralError extends BusinessRuleError {
  constructor(currency: string, available: bigint, amount: bigint) {
    super('INSUFFICIENT_COLLATERAL', `not enough ${currency} to secure this position`, {
      currency,
      available: available.toString(),
      amount: amount.toString(),
    })
  }
}
/** A leg that cannot be bought back now (expired, not sold yet, nothing left to buy); `why` says which. */
export class CloseUnavailableError extends AppError {
  constructor(id: string, why: string) {
    super({ code: 'CLOSE_UNAVAILABLE', statusCode: 409, message: `position ${id} ${why}` })
  }
}
/** cancelPosition of a sold leg: it is closed (bought back) with closePosition instead. */
export class PositionSoldError extends AppError {
  constructor(id: string, state: string) {
    super({
      code: 'POSITION_SOLD',
      statusCode: 409,
      message: `position ${id} is ${state}: buy it back (closePosition) rather than cancel it`,
      details: { state },
    })
  }
}
/** The buy-back could not be priced: the exchange's ticker is unreachable or shows no price (503). */
export class QuoteUnavailableError extends AppError {
  constructor(instrument: string, cause?: unknown) {
    super({
      code: 'QUOTE_UNAVAILABLE',
      statusCode: 503,
      retryable: true,
      message: `no price to buy ${instrument} back right now, try again shortly`,
      details: { instrument },
      ...(cause === undefined ? {} : { cause }),
    })
  }
}
export class PositionFinishedError extends AppError {
  constructor(id: string, state: string) {
    super({ code: 'POSITION_FINISHED', statusCode: 409, message: `position ${id} is already ${state}` })
  }
}

export interface PositionRequest {
  userId: string
  asset: Underlying
  side: PositionSide
  /** collateral in base units: USDC for a put, the underlying for a call */
  amount: bigint
  idempotencyKey?: string
  wheelId?: string
}

export interface RequestedPosition {
  id: string
  state: PositionState
  collateralCurrency: string
  collateralAmount: bigint
  /** the part funded from the free balance (0 when the subaccount held it unencumbered) */
  funded: bigint
  /** an earlier request with the same Idempotency-Key */
  replayed: boolean
}

/** The currency a leg is secured in. */
export function collateralCurrencyOf(asset: Underlying, side: PositionSide): string {
  return side === 'put' ? CASH_CURRENCY : asset
}

/**
 * What the subaccount holds in `currency` and no live position has claimed: the journal balance of
 * the subaccount minus the collateral of live positions that is already there (their funded part
 * still in flight is counted by the funding reserve instead).
 */
export async function unencumbered(
  tx: Queryable,
  sub: { id: string; exchange_id: string | null },
  userId: string,
  currency: string,
): Promise<bigint> {
  const [held] =
    sub.exchange_id === null
      ? [{ v: '0' }]
      : await tx<{ v: string }[]>`
          select coalesce(sum(balance), 0) as v from ledger_balances
          where account = ${userSub(userId, sub.exchange_id, currency)} and currency = ${currency}`
  const [claimed] = await tx<{ v: string }[]>`
    select coalesce(sum(p.collateral_amount), 0) - coalesce(sum(f.amount), 0) as v
    from positions p
    left join subaccount_transfers f on f.id = p.funding_transfer_id and f.state <> 'funded'
    where p.subaccount_id = ${sub.id} and p.collateral_currency = ${currency}
      and p.state in ('requested', 'funding', 'placing', 'open', 'closing')`
  return BigInt(held?.v ?? '0') - BigInt(claimed?.v ?? '0')
}

/**
 * Accepts a position: refuses it while the side is paused or the subaccount stopped; claims what
 * the subaccount holds unencumbered and reserves the rest of the collateral from the free balance
 * (reserveFundingTransfer), all in one transaction under the subaccount row's lock, so two requests can
 * never claim the same money. Nothing is written when it throws.
 */
export async function requestPosition(sql: Sql, req: PositionRequest): Promise<RequestedPosition> {
  // bad input, as every INVALID_AMOUNT is: 400 (a malformed or over-precise amount is refused the same way)
  if (req.amount <= 0n) throw new InvalidAmountError(req.amount.toString(), 'amount must be positive')
  const currency = collateralCurrencyOf(req.asset, req.side)
  if (req.idempotencyKey) {
    const earlier = await byIdempotencyKey(sql, req.userId, req.idempotencyKey)
    if (earlier) return sameRequest(earlier, req)
  }
  try {
    return await sql.begin(async (tx) => {
      const [signal] = await tx<{ paused: boolean; reason: string | null }[]>`
        select paused, reason from signal_state where asset = ${req.asset} and side = ${req.side}`
      if (signal?.paused) throw new SellingPausedError(req.asset, req.side, signal.reason)
      await ensureSubaccount(tx, req.userId, req.asset)
      const [sub] = await tx<
        { id: string; exchange_id: string | null; stopped_at: Date | null; stop_reason: string | null }[]
      >`select id, exchange_id::text, stopped_at, stop_reason from subaccounts
        where user_id = ${req.userId} and asset = ${req.asset} for update`
      if (!sub) throw new Error('subaccount row vanished')
      if (sub.stopped_at) throw new SubaccountStoppedError(req.asset, sub.stop_reason)
      const [releasing] = await tx`select 1 from subaccount_releases
        where subaccount_id = ${sub.id} and state in ('requested', 'waiting', 'withdrawing') limit 1`
      if (releasing) throw new ReleaseInProgressError(req.asset)
      const free = await unencumbered(tx, sub, req.userId, currency)
      const fromSub = minBigint(maxBigint(free, 0n), req.amount)
      const toFund = req.amount - fromSub
      let transferId: string | null = null
      if (toFund > 0n) {
        try {
          ;({ transferId } = await reserveFundingTransfer(tx, {
            userId: req.userId,
            asset: req.asset,
            currency,
            amount: toFund,
          }))
        } catch (e) {
          if (e instanceof InsufficientFreeBalanceError)
            throw new InsufficientCollateralError(
              currency,
              fromSub + BigInt(String(e.details?.freeBalance ?? '0')),
              req.amount,
            )
          throw e
        }
      }
      const state: PositionState = transferId ? 'funding' : 'requested'
      const id = await insertPosition(tx, {
        userId: req.userId,
        asset: req.asset,
        side: req.side,
        wheelId: req.wheelId ?? null,
        subaccountId: sub.id,
        state,
        currency,
        amount: req.amount,
        fundingTransferId: transferId,
        idempotencyKey: req.idempotencyKey ?? null,
      })
      return {
        id,
        state,
        collateralCurrency: currency,
        collateralAmount: req.amount,
        funded: toFund,
        replayed: false,
      }
    })
  } catch (e) {
    // two requests with one Idempotency-Key raced: the loser answers with the winner's position
    if ((e as { code?: string }).code === '23505' && req.idempotencyKey) {
      const earlier = await byIdempotencyKey(sql, req.userId, req.idempotencyKey)
      if (earlier) return sameRequest(earlier, req)
    }
    throw e
  }
}

/** An earlier request under the same key answers only for the same request: asset, side and amount. */
function sameRequest(earlier: EarlierPosition, req: PositionRequest): RequestedPosition {
  if (
    earlier.asset !== req.asset ||
    earlier.side !== req.side ||
    earlier.collateralAmount !== req.amount ||
    earlier.wheelId !== (req.wheelId ?? null)
  )
    throw new IdempotencyKeyReusedError()
  const { asset: _a, side: _s, wheelId: _w, ...position } = earlier
  return position
}

type EarlierPosition = RequestedPosition & { asset: string; side: string; wheelId: string | null }

async function byIdempotencyKey(sql: Queryable, userId: string, key: string): Promise<EarlierPosition | undefined> {
  const [r] = await sql<
    {
      id: string
      asset: string
      side: string
      wheel_id: string | null
      state: PositionState
      collateral_currency: string
      collateral_amount: string
      funded: string | null
    }[]
  >`select p.id, p.asset, p.side, p.wheel_id, p.state, p.collateral_currency, p.collateral_amount, f.amount as funded
    from positions p left join subaccount_transfers f on f.id = p.funding_transfer_id
    where p.user_id = ${userId} and p.idempotency_key = ${key}`
  return r
    ? {
        id: r.id,
        asset: r.asset,
        side: r.side,
        wheelId: r.wheel_id,
        state: r.state,
        collateralCurrency: r.collateral_currency,
        collateralAmount: BigInt(r.collateral_amount),
        funded: BigInt(r.funded ?? '0'),
        replayed: true,
      }
    : undefined
}

/** Reads an instrument's ticker for a buy-back quote (the API: the exchange's public get_ticker). */
export type PriceReader = (instrument: string) => Promise<TickerPrices>

export interface CloseResult {
  outcome: 'close_requested'
  state: 'closing'
  quote: BuyBackQuote
}

interface CloseRow {
  state: PositionState
  asset: string
  instrument: string | null
  expiry_sec: number | null
  filled_e18: string
  bought_e18: string
  close_limit_e18: string | null
  cancel_requested_at: Date | null
  stopped_at: Date | null
  stop_reason: string | null
}

/** How often a close re-reads a leg that changed under its quote (a fill landed meanwhile). */
const CLOSE_ATTEMPTS = 2

/**
 * Buys an open leg back (docs/trading.md "Buying a leg back"): quotes the open amount (filled −
 * bought) from `prices` (the best ask, or the mark plus a margin) and moves the leg `open →
 * closing` with `close_limit_e18` = the quoted price plus CLOSE_LIMIT_TOLERANCE_BPS; the placing
 * tick then sends one immediate-or-cancel buy at that limit. A leg already `closing` answers its
 * stored quote again without reading a price (idempotent). The price is read outside any
 * transaction; the move is a conditional UPDATE on the state and the amounts the quote was made for.
 *
 * Throws NotFoundError (not the caller's), PositionFinishedError (terminal), CloseUnavailableError
 * (not sold yet, expired, nothing left to buy), SubaccountStoppedError, QuoteUnavailableError (503:
 * the price could not be read).
 *
 * @example
 *   const { quote } = await closePosition(sql, userId, positionId, exchangePrices, clock.now())
 */
export async function closePosition(
  sql: Sql,
  userId: string,
  positionId: string,
  prices: PriceReader,
  now: Date,
): Promise<CloseResult> {
  for (let attempt = 1; ; attempt++) {
    const p = await closeRowOf(sql, userId, positionId)
    if (p.state === 'closing') return closingAnswer(p)
    if (p.state !== 'open') {
      if ((LIVE_POSITION_STATES as readonly string[]).includes(p.state))
        throw new CloseUnavailableError(positionId, `is ${p.state}: nothing is sold yet, cancel it instead`)
      throw new PositionFinishedError(positionId, p.state)
    }
    // another DELETE won the race (answered above once it reads closing), or fills kept moving
    if (attempt > CLOSE_ATTEMPTS) throw new CloseUnavailableError(positionId, 'changed while it was quoted: try again')
    const instrument = p.instrument
    if (!instrument) throw new CloseUnavailableError(positionId, 'has no instrument to buy back')
    if (p.expiry_sec !== null && p.expiry_sec * 1000 <= now.getTime())
      throw new CloseUnavailableError(positionId, 'has expired: the exchange settles it')
    if (p.stopped_at) throw new SubaccountStoppedError(p.asset, p.stop_reason)
    const open = BigInt(p.filled_e18) - BigInt(p.bought_e18)
    if (open <= 0n) throw new CloseUnavailableError(positionId, 'has nothing left to buy back')
    let ticker: TickerPrices
    try {
      ticker = await prices(instrument)
    } catch (e) {
      throw new QuoteUnavailableError(instrument, e)
    }
    const quote = buyBackQuote(ticker, open, now)
    if (!quote) throw new QuoteUnavailableError(instrument)
    const moved = await startClosing(sql, {
      id: positionId,
      userId,
      limitE18: quote.limitE18,
      now,
      filledE18: p.filled_e18,
      boughtE18: p.bought_e18,
    })
    if (moved) return { outcome: 'close_requested', state: 'closing', quote }
  }
}

async function closeRowOf(sql: Queryable, userId: string, positionId: string): Promise<CloseRow> {
  const [p] = await sql<CloseRow[]>`
    select p.state, p.asset, p.instrument, p.expiry_sec::float8 as expiry_sec, p.filled_e18::text,
      p.bought_e18::text, p.close_limit_e18::text, p.cancel_requested_at, s.stopped_at, s.stop_reason
    from positions p join subaccounts s on s.id = p.subaccount_id
    where p.id = ${positionId} and p.user_id = ${userId}`
  if (!p) throw new NotFoundError('position')
  return p
}

/** A closing leg's quote as it was given: the stored limit, the price behind it, its time. */
function closingAnswer(p: CloseRow): CloseResult {
  const limitE18 = BigInt(p.close_limit_e18 ?? '0')
  const priceE18 = quotedPriceOf(limitE18)
  const amountE18 = BigInt(p.filled_e18) - BigInt(p.bought_e18)
  return {
    outcome: 'close_requested',
    state: 'closing',
    quote: {
      priceE18,
      limitE18,
      amountE18,
      cost: amountE18 > 0n ? costUsdcUp(amountE18, priceE18) : 0n,
      quotedAt: p.cancel_requested_at ?? new Date(0),
    },
  }
}
