/**
 * The wheel runner (docs/trading.md "The wheel"), run by the worker's wheel tick (queue `trading`,
 * every WHEEL_RETRY_MS, under the exchange cycle lock): when WHEEL_ENABLED, each running wheel whose
 * leg has ended gets its next leg from what its subaccount holds unclaimed. A refused step (a paused
 * side, a stopped subaccount, nothing to sell) is retried every WHEEL_RETRY_MS (60 s) until 20:00
 * UTC; after that the wheel is skipped for the day with the reason stored. A stopping wheel becomes
 * stopped once no leg is live and the exchange shows no order of its legs. `advanceWheel` is the
 * same turn for one wheel by id (a job of one row). The API's start, stop and resume are wheel.ts.
 */
import { WHEEL_RETRY_MS } from '@wh/config'
import { type Clock, decimalsOf, errorMessage, toBaseUnits } from '@wh/core'
import type { Sql } from '@wh/db'
import type { DeriveClient } from '@wh/exchange'
import { withCycleLock } from '@wh/subaccounts'
import type { Redis } from 'ioredis'
import { amountOf, type Decide, decider } from '../decider'
import type { DecisionReason } from '../decision-facts'
import { requestPosition, unencumbered } from '../positions'
import type { TradingProfile } from '../profiles'
import type { StrategyEvents } from '../strategy-events/port'
import { chooseLeg, pastWheelDeadline } from '../wheel'
import { markStopped, noteSkipped, noteWaiting, startNextLeg, stopAfterExpiry } from '../wheel-store'

/** What the wheel runner reads through (WorkerDeps satisfies it structurally; the worker adds the rest). */
export interface WheelDeps {
  readonly sql: Sql
  /** the exchange cycle lock, and the decision log's publishes */
  readonly redis: Redis
  readonly exchange: DeriveClient
  readonly clock: Clock
  readonly profile: TradingProfile
  /** WHEEL_ENABLED: off, the runner does nothing */
  readonly enabled: boolean
  /** WS /ws/strategies: a next leg is told (@wh/market's `strategyEventsOn(redis)`) */
  readonly strategyEvents: StrategyEvents
}

interface WheelRow {
  id: string
  user_id: string
  asset: 'ETH' | 'BTC'
  subaccount_id: string
  exchange_id: string | null
  state: 'running' | 'stopping'
  current_position_id: string | null
  leg_state: string | null
  leg_outcome: string | null
  /** the conversion round of the current leg, if any (docs/trading.md "Conversions") */
  conversion_state: string | null
  last_attempt_at: Date | null
  /** 'settle': the wheel stops after an expiry instead of opening the next leg (docs/trading.md "Wheel settings") */
  at_expiry: string | null
}

export interface WheelSummary {
  locked: boolean
  disabled: boolean
  steps: Record<string, number>
}

const LIVE = new Set(['requested', 'funding', 'placing', 'open', 'closing'])
/** wheels turned per run (a bound on everything) */
export const WHEEL_BATCH = 500

export async function runWheels(deps: WheelDeps): Promise<WheelSummary> {
  if (!deps.enabled) return { locked: false, disabled: true, steps: {} }
  const r = await withCycleLock(deps.redis, () => turnAll(deps))
  return r.ran ? { locked: false, disabled: false, steps: r.value } : { locked: true, disabled: false, steps: {} }
}

/**
 * One wheel's turn, by id, under the exchange cycle lock: its next leg, its wait, its skip or its
 * stop, exactly as a run does for each of its rows. A wheel not running or stopping turns nothing;
 * nothing at all when WHEEL_ENABLED is off.
 */
export async function advanceWheel(deps: WheelDeps, wheelId: string): Promise<WheelSummary> {
  if (!deps.enabled) return { locked: false, disabled: true, steps: {} }
  const r = await withCycleLock(deps.redis, () => turnWheel(deps, wheelId))
  return r.ran ? { locked: false, disabled: false, steps: r.value } : { locked: true, disabled: false, steps: {} }
}

/**
 * `advanceWheel`'s turn without taking the lock, for a caller that holds the exchange cycle lock
 * (the `wheel.next-leg` and `wheel.stop` jobs, docs/architecture.md "Accepted work"); `{ disabled: 1 }`
 * when WHEEL_ENABLED is off.
 */
export async function turnWheel(deps: WheelDeps, wheelId: string): Promise<Record<string, number>> {
  if (!deps.enabled) return { disabled: 1 }
  return turnRows(deps, await wheelRows(deps.sql, wheelId), deps.clock.now())
}

async function turnAll(deps: WheelDeps): Promise<Record<string, number>> {
  const now = deps.clock.now()
  return turnRows(deps, await wheelRows(deps.sql), now)
}

/** The wheels running or stopping, oldest update first (at most WHEEL_BATCH), or only `wheelId`'s row. */
async function wheelRows(sql: Sql, wheelId?: string): Promise<WheelRow[]> {
  return sql<WheelRow[]>`
    select w.id, w.user_id, w.asset, w.subaccount_id, s.exchange_id::text, w.state, w.current_position_id,
      p.state as leg_state, p.outcome as leg_outcome, c.state as conversion_state, w.last_attempt_at, w.at_expiry
    from wheels w join subaccounts s on s.id = w.subaccount_id
    left join positions p on p.id = w.current_position_id
    left join conversions c on c.position_id = w.current_position_id
    where w.state in ('running', 'stopping') ${wheelId === undefined ? sql`` : sql`and w.id = ${wheelId}`}
    order by w.updated_at
    limit ${WHEEL_BATCH}`
}

async function turnRows(deps: WheelDeps, rows: readonly WheelRow[], now: Date): Promise<Record<string, number>> {
  const steps: Record<string, number> = {}
  for (const w of rows) {
    const step = await turn(deps, w, now)
    steps[step] = (steps[step] ?? 0) + 1
  }
  return steps
}

async function skip(
  sql: Sql,
  id: string,
  reason: string,
  now: Date,
  why?: Decide,
  code?: DecisionReason,
): Promise<string> {
  if (why && code) await why('skipped', code, code === 'refused' ? { detail: reason } : {})
  await noteSkipped(sql, id, reason, now)
  return 'skipped'
}

/** Waiting on another tick (not a failed step): the reason is shown, the retry clock is not started. */
async function waitFor(
  sql: Sql,
  id: string,
  reason: string,
  why: Decide,
  code: DecisionReason,
  detail?: string,
): Promise<string> {
  await why('waiting', code, detail ? { detail } : {})
  await noteWaiting(sql, id, reason)
  return 'converting'
}

async function turn(deps: WheelDeps, w: WheelRow, now: Date): Promise<string> {
  const { sql } = deps
  if (w.leg_state !== null && LIVE.has(w.leg_state)) return 'leg_live'
  // each decision below is logged once per change (docs/trading.md "Why: the decision log")
  const why = decider(deps, { wheelId: w.id, userId: w.user_id, positionId: w.current_position_id }, now)
  if (w.state === 'stopping') return finishStopping(deps, w, now, why)
  // a leg that ended in the money flips the holding first: the convert tick opens and runs the round
  if (w.conversion_state !== null && !['done', 'failed'].includes(w.conversion_state))
    return waitFor(
      sql,
      w.id,
      `converting (${w.conversion_state}) after the last leg`,
      why,
      'conversion_in_progress',
      w.conversion_state,
    )
  if (w.conversion_state === null && w.leg_state === 'settled' && w.leg_outcome === 'itm')
    return waitFor(
      sql,
      w.id,
      'the last leg settled in the money: waiting for its conversion round',
      why,
      'awaiting_conversion',
    )
  if (w.at_expiry === 'settle' && w.leg_state === 'settled') {
    // the leg expired (and an in-the-money one was converted, above): the wheel ends here
    if (await stopAfterExpiry(sql, w.id, now)) await why('stopped', 'stopped_at_expiry')
    return 'settled_stopped'
  }
  if (pastWheelDeadline(now))
    return skip(sql, w.id, 'after the 20:00 UTC deadline: the next leg waits for tomorrow', now, why, 'deadline_passed')
  if (w.last_attempt_at && now.getTime() - w.last_attempt_at.getTime() < WHEEL_RETRY_MS) return 'waiting_retry'
  if (w.exchange_id === null)
    return skip(sql, w.id, 'the subaccount is not created yet', now, why, 'subaccount_missing')

  return openNextLeg(deps, w, now, why)
}

type Why = ReturnType<typeof decider>

/** stopping → stopped, once the exchange shows no order of its legs either. */
async function finishStopping(deps: WheelDeps, w: WheelRow, now: Date, why: Why): Promise<string> {
  const { sql } = deps
  if (w.exchange_id !== null) {
    const { orders } = await deps.exchange.getOpenOrders(Number(w.exchange_id))
    const legs = await sql<{ id: string }[]>`select id from positions where wheel_id = ${w.id}`
    const ids = new Set(legs.map((l) => l.id))
    if (orders.some((o) => ids.has(o.label))) return 'stopping'
  }
  if (await markStopped(sql, w.id, now)) await why('stopped', 'stopped_by_user')
  return 'stopped'
}

/** The next leg from what the subaccount holds unclaimed: a call on the underlying, else a put with the cash. */
async function openNextLeg(deps: WheelDeps, w: WheelRow, now: Date, why: Why): Promise<string> {
  const { sql } = deps
  const unclaimed = await unclaimedOf(sql, w)
  const decimals = decimalsOf(w.asset) ?? 18
  const minUnderlying = toBaseUnits(deps.profile.sizes[w.asset].min, decimals)
  const leg = chooseLeg(unclaimed, minUnderlying)
  if (!leg)
    return skip(sql, w.id, 'nothing to sell: the subaccount holds no unclaimed collateral', now, why, 'nothing_to_sell')
  try {
    const p = await requestPosition(sql, {
      userId: w.user_id,
      asset: w.asset,
      side: leg.side,
      amount: leg.amount,
      wheelId: w.id,
    })
    await startNextLeg(sql, w.id, p.id, now)
    const currency = leg.side === 'put' ? 'USDC' : w.asset
    const amount = amountOf(leg.amount, currency).split(' ')[0] as string
    await decider(deps, { wheelId: w.id, userId: w.user_id, positionId: p.id }, now)(
      'leg_opened',
      leg.side === 'put' ? 'holding_cash' : 'holding_underlying',
      { leg: { side: leg.side, amount, currency } },
    )
    await deps.strategyEvents.publish(w.asset, {
      ts: now.toISOString(),
      event: 'wheel_leg',
      strategy: 'wheel',
      side: leg.side,
    })
    return leg.side === 'put' ? 'put_opened' : 'call_opened'
  } catch (e) {
    // a business refusal (paused, stopped, a release open): retried after WHEEL_RETRY_MS, reason shown
    return skip(sql, w.id, errorMessage(e).slice(0, 500), now, why, 'refused')
  }
}

/** What the wheel's subaccount holds that no live position claims, in cash and in the underlying. */
async function unclaimedOf(sql: Sql, w: WheelRow): Promise<{ underlying: bigint; cash: bigint }> {
  const sub = { id: w.subaccount_id, exchange_id: w.exchange_id }
  const positive = (v: bigint) => (v > 0n ? v : 0n)
  return {
    underlying: positive(await unencumbered(sql, sub, w.user_id, w.asset)),
    cash: positive(await unencumbered(sql, sub, w.user_id, 'USDC')),
  }
}
