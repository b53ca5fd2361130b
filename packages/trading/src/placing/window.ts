/**
 * The maker window of a `placing` leg (docs/trading.md "Placing" 3–4): one post-only order resting
 * at the window's price, repriced every `repriceEveryMs`; when everything is sold, the window ends,
 * or the leg is cancelled, paused or stopped, its orders are cancelled, the rest may cross at the
 * best bid (profile `endOfWindow: cross`), and the leg becomes `open` (something sold) or
 * `cancelled` (nothing). Every order carries the position id as its label.
 */
import { errorMessage } from '@wh/core'
import { fromE18, type Order, toE18 } from '@wh/exchange'
import { decider } from '../decider'
import { ingestFills } from '../fills/ingest'
import { askPrice, crossFloor } from '../placing'
import { deferReprice, endPlacing, recordRestingOrder } from '../position-store'
import { strategyOf } from '../strategy-events/publish'
import { cancelQuietly, type MarketCache, maxFee, ourOrders, wait } from './market'
import type { Live, PlaceDeps } from './types'

/** placing: keep one order resting at the window's price; end the window (docs/trading.md 3–4). */
export async function work(deps: PlaceDeps, market: MarketCache, p: Live, now: Date): Promise<string> {
  const subId = Number(p.exchange_id)
  const [fresh] = await deps.sql<{ filled_e18: string }[]>`select filled_e18::text from positions where id = ${p.id}`
  const remaining = BigInt(p.size_e18 ?? '0') - BigInt(fresh?.filled_e18 ?? p.filled_e18)
  const resting = await ourOrders(deps.exchange, subId, p.id)
  const over = now >= (p.window_ends_at ?? now)
  const halt = p.cancel_requested_at !== null || p.paused || p.stopped_at !== null
  if (remaining <= 0n || over || halt) {
    for (const o of resting) await cancelQuietly(deps.exchange, subId, o)
    const crossed = remaining > 0n && over && !halt && (await crossRest(deps, market, p, remaining))
    return endWindow(deps, p, now, remaining, crossed)
  }
  return reprice(deps, market, p, now, remaining, resting)
}

/** The window ended with contracts unsold: the profile may sell them at the best bid, down to its floor. */
async function crossRest(deps: PlaceDeps, market: MarketCache, p: Live, remaining: bigint): Promise<boolean> {
  if (deps.profile.endOfWindow !== 'cross') return false
  const instrument = p.instrument as string
  const t = await market.ticker(instrument, true)
  const bid = toE18(t.best_bid_price)
  if (bid <= 0n || bid < crossFloor(toE18(t.mark_price), deps.profile)) return false
  const subId = Number(p.exchange_id)
  await deps.exchange.order({
    subaccount_id: subId,
    instrument_name: instrument,
    direction: 'sell',
    amount: fromE18(remaining),
    limit_price: fromE18(bid),
    max_fee: maxFee(t, bid),
    time_in_force: 'ioc',
    label: p.id,
  })
  await ingestFills(deps, { id: p.subaccount_id, userId: p.user_id, exchangeId: subId })
  return true
}

/** Why a window ended before its contracts were all sold (null: they were). */
function endReason(p: Live, remaining: bigint): string | null {
  if (p.cancel_requested_at) return 'cancelled by the user'
  if (p.paused) return 'paused by a signal'
  if (p.stopped_at) return 'the subaccount was stopped'
  return remaining <= 0n ? null : 'the maker window ended'
}

/** placing → open (something sold) or cancelled (nothing), with why; `window_end` published. */
async function endWindow(deps: PlaceDeps, p: Live, now: Date, remaining: bigint, crossed: boolean): Promise<string> {
  const { sql } = deps
  const [after] = await sql<{ filled_e18: string }[]>`select filled_e18::text from positions where id = ${p.id}`
  const done = BigInt(after?.filled_e18 ?? '0')
  const why = endReason(p, remaining)
  await endPlacing(sql, p.id, { sold: done > 0n, reason: why, now })
  if (done === 0n && why === 'the maker window ended')
    await decider(deps, { wheelId: p.wheel_id, userId: p.user_id, positionId: p.id }, now)('skipped', 'window_ended')
  await deps.strategyEvents.publish(p.asset, {
    ts: now.toISOString(),
    event: 'window_end',
    strategy: strategyOf(p.wheel, p.side),
    instrument: p.instrument as string,
    decision: remaining <= 0n ? 'completed' : crossed ? 'crossed' : 'cancelled',
    reason: crossed
      ? 'the maker window ended: the rest was sold at the best bid'
      : (why ??
        (remaining <= 0n ? 'everything offered was sold' : 'the maker window ended: no bid within the cross floor')),
  })
  return done > 0n ? 'opened' : 'cancelled'
}

/** Inside the window: one maker order at the window's price, repriced every `repriceEveryMs`. */
async function reprice(
  deps: PlaceDeps,
  market: MarketCache,
  p: Live,
  now: Date,
  remaining: bigint,
  resting: readonly Order[],
): Promise<string> {
  const { sql, profile, exchange } = deps
  const subId = Number(p.exchange_id)
  const instrument = p.instrument as string
  if (resting.length > 0 && p.next_reprice_at && now < p.next_reprice_at) return 'resting'
  const t = await market.ticker(instrument, true)
  const windowStart = (p.window_ends_at?.getTime() ?? now.getTime()) - profile.makerWindowMs
  const price = askPrice(toE18(t.mark_price), now.getTime() - windowStart, profile, toE18(t.tick_size))
  const nextReprice = new Date(now.getTime() + profile.repriceEveryMs)
  if (resting.length === 1 && toE18(resting[0]?.limit_price ?? '0') === price) {
    await deferReprice(sql, p.id, nextReprice)
    return 'resting'
  }
  for (const o of resting) await cancelQuietly(exchange, subId, o)
  try {
    const { order } = await exchange.order({
      subaccount_id: subId,
      instrument_name: instrument,
      direction: 'sell',
      amount: fromE18(remaining),
      limit_price: fromE18(price),
      max_fee: maxFee(t, price),
      time_in_force: 'post_only',
      label: p.id,
    })
    await recordRestingOrder(sql, p.id, order.order_id, nextReprice)
    await deps.strategyEvents.publish(p.asset, {
      ts: now.toISOString(),
      event: 'order',
      strategy: strategyOf(p.wheel, p.side),
      instrument,
      step: resting.length > 0 ? 'repriced' : 'placed',
      price: fromE18(price),
    })
    return 'placed'
  } catch (e) {
    if ((e as { code?: string }).code === 'EXCHANGE_ORDER_REJECTED')
      return wait(sql, p.id, `the exchange refused the order: ${errorMessage(e)}`)
    throw e
  }
}
