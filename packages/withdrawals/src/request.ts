/**
 * A withdrawal request (spec 4.2, 3.2, 8.2; docs/chains.md "Withdrawals"): every rule a request
 * meets before its amount is reserved, and the reserve itself, which writes the whole row in one
 * INSERT. POST /withdrawals (apps/api/src/routes/withdrawals/index.ts) parses, calls
 * `requestWithdrawal` and maps the row to its answer; the send is send.ts.
 */
import { fromBaseUnits, toBaseUnits } from '@wh/core'
import type { Sql } from '@wh/db'
import { freeBalance, InsufficientFreeBalanceError, reserveWithdrawal } from '@wh/ledger'
import { PriceUnavailableError as StalePriceError } from '@wh/market'
import type { ChainInfo, ChainName, TokenInfo } from '@wh/wallet'
import { getAddress } from 'viem'
import { contractCooling } from './cooling'
import type { DestinationGuard } from './destinations'
import {
  IdempotencyKeyReusedError,
  InvalidDestinationError,
  PriceUnavailableError,
  TooManyOpenWithdrawalsError,
  TooManyWithdrawalRequestsError,
  UnknownRouteError,
  WithdrawalAboveMaximumError,
  WithdrawalBelowMinimumError,
} from './errors'
import { usdToBaseUnits } from './limits'
import type { PriceSource, WithdrawalAsset } from './price'
import { type WithdrawalRow, withdrawalByIdempotencyKey, withdrawalColumns } from './rows'

/**
 * Withdrawals one user may have requested and not yet sent. Each waits its turn in the send queue;
 * the cap bounds what one account can put in front of everyone else's (docs/hostile-world.md
 * "Fair queues").
 */
export const WITHDRAWAL_OPEN_MAX_PER_USER = 10
/**
 * Withdrawal requests one user may make per minute past the cheap checks (amount, bounds, free
 * balance, open cap): each may cost the chain a code read and a dry run, so a user cannot make the
 * API a free dry-run service (docs/hostile-world.md "Cheap checks first").
 */
export const WITHDRAWAL_REQUESTS_PER_MINUTE = 30

const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000'
const UNIQUE_VIOLATION = '23505'

/**
 * A destination as EIP-55. All-lowercase (or all-uppercase) hex has no checksum to check; mixed
 * case must be a valid EIP-55 checksum, else a typo would send money to a wrong address.
 */
export function normaliseDestination(input: string): `0x${string}` {
  const hex = input.slice(2)
  const unchecked = hex === hex.toLowerCase() || hex === hex.toUpperCase()
  let address: `0x${string}`
  try {
    address = getAddress(`0x${hex.toLowerCase()}`)
  } catch {
    throw new InvalidDestinationError('destination is not an address')
  }
  if (!unchecked && address !== input) throw new InvalidDestinationError('destination has a wrong EIP-55 checksum')
  if (address === ZERO_ADDRESS) throw new InvalidDestinationError('destination is the zero address')
  return address
}

/**
 * config.withdrawal: WITHDRAWAL_MIN_USD / WITHDRAWAL_MAX_USD, and PLATFORM_STOP_WITHDRAWAL_MAX_USD
 * (the largest accepted while the platform is stopped), decimal USD strings.
 */
export interface WithdrawalLimits {
  readonly minUsd: string
  readonly maxUsd: string
  readonly stoppedMaxUsd: string
}

export interface WithdrawalRequestDeps {
  readonly sql: Sql
  readonly chains: ReadonlyMap<ChainName, ChainInfo>
  /** the feed's latest index, refused when older than WITHDRAWAL_PRICE_MAX_AGE_MS (price.ts) */
  readonly prices: PriceSource
  /** where a withdrawal may go (destinations.ts) */
  readonly destinations: DestinationGuard
  readonly limits: WithdrawalLimits
  /**
   * Throws while the platform is stopped: @wh/ops `assertPlatformRunning` over the same database.
   * Passed in because @wh/ops depends on this package (an operator's decision on a held
   * transaction releases its withdrawal through `releaseHeldWithdrawal`).
   */
  readonly assertPlatformRunning: (what: string) => Promise<void>
  /**
   * Takes one of the user's WITHDRAWAL_REQUESTS_PER_MINUTE, false when none is left (the API
   * counts in Redis); without it requests are not limited.
   */
  readonly takeRequestSlot?: (userId: string) => Promise<boolean>
}

export interface WithdrawalRequest {
  readonly userId: string
  readonly chain: string
  readonly asset: string
  /** a decimal string in the asset, at most its decimals */
  readonly amount: string
  /** 0x and 40 hex digits, any case */
  readonly destination: string
  /** a retried request with the same key answers the same withdrawal */
  readonly idempotencyKey?: string | undefined
}

/** The chain and token of a route; UnknownRouteError (400) when the chain does not carry the asset. */
export function withdrawalRoute(
  chains: ReadonlyMap<ChainName, ChainInfo>,
  chain: string,
  asset: string,
): { info: ChainInfo; token: TokenInfo } {
  const info = chains.get(chain as ChainName)
  const token = info?.tokens.find((t) => t.symbol === asset)
  if (!info || !token) throw new UnknownRouteError(chain, asset)
  return { info, token }
}

/**
 * The accepted range of an asset in base units, from the USD bounds at the current price.
 * PriceUnavailableError (503) when the feed has no recent price: limits in USD are only as good as
 * the price that converts them, never a price fixed in code, never a stale one
 * (docs/hostile-world.md "Limits use the real price").
 */
export async function withdrawalBounds(
  deps: Pick<WithdrawalRequestDeps, 'prices' | 'limits'>,
  asset: WithdrawalAsset,
  decimals: number,
): Promise<{ priceUsd: string; min: bigint; max: bigint }> {
  let priceUsd: string
  try {
    priceUsd = await deps.prices.usdPrice(asset)
  } catch (err) {
    if (err instanceof StalePriceError) throw new PriceUnavailableError(asset)
    throw err
  }
  return {
    priceUsd,
    min: usdToBaseUnits(deps.limits.minUsd, priceUsd, decimals, 'up'),
    max: usdToBaseUnits(deps.limits.maxUsd, priceUsd, decimals, 'down'),
  }
}

interface Wanted {
  chain: string
  asset: WithdrawalAsset
  amount: bigint
  destination: `0x${string}`
}

/**
 * Requests a withdrawal and answers its row ('requested'). Cheap checks first, so an account with
 * nothing to withdraw never costs an RPC call (docs/hostile-world.md "Cheap checks first"): the
 * route (400 UNKNOWN_ROUTE), the amount's format (400 INVALID_AMOUNT), the destination's (400
 * INVALID_DESTINATION); a replayed Idempotency-Key answers its withdrawal, or 422
 * IDEMPOTENCY_KEY_REUSED for another request; the platform's own addresses (400
 * INVALID_DESTINATION); the USD bounds at the feed's price (422, 503 PRICE_UNAVAILABLE); above
 * PLATFORM_STOP_WITHDRAWAL_MAX_USD, the platform stop (503 PLATFORM_STOPPED); the free balance
 * (422 INSUFFICIENT_FREE_BALANCE) and the open withdrawals (422 TOO_MANY_OPEN_WITHDRAWALS) as
 * they are now; the per-user request limit (429 TOO_MANY_WITHDRAWAL_REQUESTS). Then the chain:
 * the destination's code and, for ETH to code, the dry run (422 DESTINATION_REFUSES_ETH,
 * DESTINATION_GAS_ABOVE_BUDGET, CONTRACT_DESTINATIONS_COOLING). Last the reserve and the cap
 * again, under the balance's lock, in one transaction. Nothing is written when it throws.
 *
 * @example
 *   const row = await requestWithdrawal(deps, { userId, chain: 'base', asset: 'USDC', amount: '25.5', destination })
 */
export async function requestWithdrawal(deps: WithdrawalRequestDeps, req: WithdrawalRequest): Promise<WithdrawalRow> {
  const { token } = withdrawalRoute(deps.chains, req.chain, req.asset)
  const asset = token.symbol
  // 'exact': more decimals than the asset has is a 400 INVALID_AMOUNT, never silently rounded
  const amount = toBaseUnits(req.amount, token.decimals, 'exact')
  const wanted: Wanted = { chain: req.chain, asset, amount, destination: normaliseDestination(req.destination) }
  const key = req.idempotencyKey
  if (key !== undefined) {
    const earlier = await withdrawalByIdempotencyKey(deps.sql, req.userId, key)
    if (earlier) return sameRequest(earlier, wanted)
  }
  const destination = { ...wanted, userId: req.userId, chain: req.chain as ChainName }
  await deps.destinations.checkOwn(destination)
  const { min, max, priceUsd } = await withdrawalBounds(deps, asset, token.decimals)
  const { minUsd, maxUsd, stoppedMaxUsd } = deps.limits
  // a zero amount is below any minimum, even a WITHDRAWAL_MIN_USD of 0
  if (amount <= 0n || amount < min)
    throw new WithdrawalBelowMinimumError(fromBaseUnits(min, token.decimals), asset, minUsd)
  if (amount > max) throw new WithdrawalAboveMaximumError(fromBaseUnits(max, token.decimals), asset, maxUsd)
  // while the platform is stopped (a solvency deficit under review) only small withdrawals pass
  if (amount > usdToBaseUnits(stoppedMaxUsd, priceUsd, token.decimals, 'down'))
    await deps.assertPlatformRunning(`a withdrawal above ${stoppedMaxUsd} USD`)
  await assertCoversAndFits(deps.sql, req.userId, asset, amount)
  if (deps.takeRequestSlot && !(await deps.takeRequestSlot(req.userId)))
    throw new TooManyWithdrawalRequestsError(WITHDRAWAL_REQUESTS_PER_MINUTE)
  await deps.destinations.checkOnChain({ ...destination, cooling: await contractCooling(deps.sql, req.userId) })
  try {
    return await reserveRequest(deps.sql, req.userId, wanted, key)
  } catch (err) {
    // A racing request with the same key won: it either committed first (unique violation here),
    // or its reserve spent the balance this one waited for. Answer its withdrawal.
    const raced =
      key !== undefined &&
      ((err as { code?: string }).code === UNIQUE_VIOLATION || err instanceof InsufficientFreeBalanceError)
    if (raced) {
      const winner = await withdrawalByIdempotencyKey(deps.sql, req.userId, key)
      if (winner) return sameRequest(winner, wanted)
    }
    throw err
  }
}

/**
 * The free balance and the open withdrawals as they are now, read without a lock: a request that
 * cannot pass the reserve is refused before it costs the chain anything. The reserve checks both
 * again under the balance's lock (this read may be stale by the time it runs).
 */
async function assertCoversAndFits(sql: Sql, userId: string, currency: string, amount: bigint): Promise<void> {
  const [free, [open]] = await Promise.all([
    freeBalance(sql, userId, currency),
    sql<{ n: number }[]>`select count(*)::int as n from withdrawals where user_id = ${userId} and state = 'requested'`,
  ])
  if (free < amount) throw new InsufficientFreeBalanceError({ userId, currency, freeBalance: free, amount })
  if ((open?.n ?? 0) >= WITHDRAWAL_OPEN_MAX_PER_USER)
    throw new TooManyOpenWithdrawalsError(WITHDRAWAL_OPEN_MAX_PER_USER)
}

/**
 * The reserve and the cap, one transaction: the reserve locks the user's transit balance and
 * inserts the whole row (route, destination, key); the open withdrawals are counted after it, under
 * that lock, so concurrent requests of one currency queue on it and the cap holds under a burst.
 */
async function reserveRequest(sql: Sql, userId: string, w: Wanted, key: string | undefined): Promise<WithdrawalRow> {
  return sql.begin(async (tx) => {
    const { withdrawalId } = await reserveWithdrawal(tx, {
      userId,
      currency: w.asset,
      amount: w.amount,
      chain: w.chain,
      destination: w.destination,
      ...(key !== undefined && { idempotencyKey: key }),
    })
    const [row] = await tx<(WithdrawalRow & { open: number })[]>`
      select ${withdrawalColumns(tx)},
        (select count(*)::int from withdrawals o where o.user_id = ${userId} and o.state = 'requested') as open
      from withdrawals where id = ${withdrawalId}`
    if (!row) throw new Error(`withdrawal ${withdrawalId} vanished in its own transaction`)
    if (row.open > WITHDRAWAL_OPEN_MAX_PER_USER) throw new TooManyOpenWithdrawalsError(WITHDRAWAL_OPEN_MAX_PER_USER)
    const { open: _, ...withdrawal } = row
    return withdrawal
  })
}

/** A replay must be the same request: another body under a used key is refused, not merged. */
function sameRequest(row: WithdrawalRow, w: Wanted): WithdrawalRow {
  if (
    row.chain !== w.chain ||
    row.currency !== w.asset ||
    BigInt(row.amount) !== w.amount ||
    row.destination !== w.destination
  )
    throw new IdempotencyKeyReusedError()
  return row
}
