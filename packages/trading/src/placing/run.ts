/**
 * The placing step (docs/trading.md "Position states", "Placing"), run by the worker's placing tick
 * (queue `trading`, under the exchange cycle lock): moves each live position one step. Every step
 * is a conditional update of the position's own state, and every order carries the position id as
 * its label, so a repeated run or a crash between sending an order and storing its id sends no
 * second order: the next run finds the first one among the subaccount's open orders and cancels or
 * keeps it. `advancePosition` is the same step for one position by id (a job of one row).
 *
 * The steps by state: `funding` follows its funding transfer; `requested` chooses its instrument
 * (choose.ts); `placing` works its maker window (window.ts); `closing` (DELETE of an open leg,
 * docs/trading.md "Buying a leg back") gets ONE immediate-or-cancel buy of what is still short, at
 * its stored limit, after the subaccount's fills were ingested (buyback.ts, `close`: why a crash
 * never buys twice); `open` waits for its settlement.
 */
import { mapLimit } from '@wh/core'
import type { Sql } from '@wh/db'
import { withCycleLock } from '@wh/subaccounts'
import { ingestFills } from '../fills/ingest'
import { ingestSettlements } from '../fills/settlements'
import { fundingFailed, fundingLanded } from '../position-store'
import { publishCapacity } from '../strategy-events/publish'
import { close, closeIfBoughtBack } from './buyback'
import { choose } from './choose'
import { MarketCache, stepFailed } from './market'
import type { Live, PlaceDeps, PlaceSummary } from './types'
import { work } from './window'

/** live positions worked per run (TIGER_STYLE: a bound on everything) */
export const PLACE_BATCH = 500
/** subaccounts worked on at once */
export const PLACE_CONCURRENCY = 16

/** One run: every live position one step further. */
export async function runPlacing(deps: PlaceDeps): Promise<PlaceSummary> {
  const r = await withCycleLock(deps.redis, () => placeAll(deps))
  return r.ran ? { locked: false, steps: r.value } : { locked: true, steps: {} }
}

/**
 * One position one step further, by id, under the exchange cycle lock: its subaccount's fills and
 * settlements recorded first (when it may have any), then its step, exactly as a run does for each
 * of its rows (funding done → instrument chosen → order placed or repriced → window ended). A
 * position that is not live (or not there) steps nothing. The strategies' `capacity` is the run's
 * to publish, not this.
 */
export async function advancePosition(deps: PlaceDeps, positionId: string): Promise<PlaceSummary> {
  const r = await withCycleLock(deps.redis, () => stepPosition(deps, positionId))
  return r.ran ? { locked: false, steps: r.value } : { locked: true, steps: {} }
}

/**
 * `advancePosition`'s step without taking the lock: for a caller that already holds the exchange
 * cycle lock and takes several steps under it (the `position.*` jobs, docs/architecture.md
 * "Accepted work"). The lock is not re-entrant, so they cannot call `advancePosition`.
 */
export async function stepPosition(deps: PlaceDeps, positionId: string): Promise<Record<string, number>> {
  return placeRows(deps, await liveRows(deps.sql, positionId), deps.clock.now())
}

async function placeAll(deps: PlaceDeps): Promise<Record<string, number>> {
  const now = deps.clock.now()
  const steps = await placeRows(deps, await liveRows(deps.sql), now)
  await publishCapacity(deps.sql, deps.strategyEvents, deps.profile, now)
  return steps
}

/** The live positions, oldest update first (at most PLACE_BATCH), or only `positionId`'s row. */
async function liveRows(sql: Sql, positionId?: string): Promise<Live[]> {
  return sql<Live[]>`
    select p.id, p.user_id, p.asset, p.side, p.state, p.subaccount_id, s.exchange_id::text, s.stopped_at,
      p.collateral_amount::text, p.collateral_currency, f.state as funding_state, f.reason as funding_reason,
      p.instrument, p.size_e18::text, p.filled_e18::text, p.bought_e18::text, p.window_ends_at, p.next_reprice_at,
      p.cancel_requested_at, p.created_at, coalesce(g.paused, false) as paused, w.cost_basis_e18::text as cost_basis,
      (p.wheel_id is not null) as wheel, p.wheel_id, w.strike_by, w.put_target_delta_bps, w.call_target_delta_bps,
      w.otm_bps, w.min_tenor_hours, w.max_tenor_days, w.at_expiry
    from positions p
    join subaccounts s on s.id = p.subaccount_id
    left join subaccount_transfers f on f.id = p.funding_transfer_id
    left join signal_state g on g.asset = p.asset and g.side = p.side
    left join wheels w on w.id = p.wheel_id
    where p.state in ('requested', 'funding', 'placing', 'open', 'closing')
      ${positionId === undefined ? sql`` : sql`and p.id = ${positionId}`}
    order by p.updated_at
    limit ${PLACE_BATCH}`
}

/** `live` one step each: positions of one subaccount one after another, subaccounts side by side. */
async function placeRows(deps: PlaceDeps, live: readonly Live[], now: Date): Promise<Record<string, number>> {
  const steps: Record<string, number> = {}
  const count = (k: string) => {
    steps[k] = (steps[k] ?? 0) + 1
  }
  const market = new MarketCache(deps.exchange)
  // positions of one subaccount one after another (they share its histories and open orders),
  // subaccounts side by side: a run's time grows with positions / PLACE_CONCURRENCY
  const bySub = new Map<string, Live[]>()
  for (const p of live) bySub.set(p.subaccount_id, [...(bySub.get(p.subaccount_id) ?? []), p])
  await mapLimit([...bySub.values()], PLACE_CONCURRENCY, (group) => placeGroup(deps, market, group, now, count))
  return steps
}

/** One subaccount's positions: its fills and settlements first, then each position's step. */
async function placeGroup(
  deps: PlaceDeps,
  market: MarketCache,
  group: readonly Live[],
  now: Date,
  count: (step: string) => void,
): Promise<void> {
  const first = group[0] as Live
  // the subaccount's fills first, before any step sends an order: a closing leg's buy-back is
  // sized from what this ingestion recorded (see `close`)
  if (
    first.exchange_id !== null &&
    group.some((p) => p.state === 'placing' || p.state === 'open' || p.state === 'closing')
  ) {
    const sub = { id: first.subaccount_id, userId: first.user_id, exchangeId: Number(first.exchange_id) }
    try {
      await ingestFills(deps, sub)
      if ((await ingestSettlements(deps, sub, now.getTime())) > 0) count('settled')
    } catch (e) {
      // the subaccount's positions wait for their fills: each row says why, and the log too
      count('error')
      return stepFailed(deps, group, 'the fills could not be read', e)
    }
  }
  for (const p of group) {
    try {
      count(await step(deps, market, p, now))
    } catch (e) {
      // one position's trouble (an exchange refusal, a timeout) must not stop the others
      count('error')
      await stepFailed(deps, [p], 'placing step failed', e)
    }
  }
}

async function step(deps: PlaceDeps, market: MarketCache, p: Live, now: Date): Promise<string> {
  const { sql } = deps
  switch (p.state) {
    case 'funding':
      if (p.funding_state === 'funded') {
        await fundingLanded(sql, p.id)
        return 'funded'
      }
      if (p.funding_state === 'failed') {
        await fundingFailed(sql, p.id, p.funding_reason)
        return 'failed'
      }
      return 'waiting_funding'
    case 'requested':
      return choose(deps, market, p, now)
    case 'placing':
      return work(deps, market, p, now)
    case 'closing':
      return close(deps, p, now)
    default:
      return closeIfBoughtBack(sql, p)
  }
}
