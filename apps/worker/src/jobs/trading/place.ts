/**
 * The placing tick (queue `trading`, under the exchange cycle lock; docs/trading.md "Position
 * states", "Placing"): moves each live position one step. Every step is a conditional update of
 * the position's own state, and every order carries the position id as its label, so a repeated
 * run or a crash between sending an order and storing its id sends no second order: the next run
 * finds the first one among the subaccount's open orders and cancels or keeps it.
 *
 * A `closing` leg (DELETE of an open leg, docs/trading.md "Buying a leg back") gets ONE
 * immediate-or-cancel buy of what is still short, at its stored limit, after the subaccount's
 * fills were ingested; see `close` for why a crash never buys twice.
 */
import { type Clock, decimalsOf, errorMessage, mapLimit } from '@wh/core'
import type { Sql } from '@wh/db'
import { type Instrument, type Order, toE18 } from '@wh/exchange'
import { markIvE18 } from '@wh/market'
import { withCycleLock } from '@wh/subaccounts'
import {
  annualisedYieldBps,
  askPrice,
  chooseStrikeByOtm,
  crossFloor,
  type DecisionFacts,
  type DecisionReason,
  decider,
  deferReprice,
  endPlacing,
  expiryChoice,
  expiryFacts,
  failRequested,
  fundingFailed,
  fundingLanded,
  legSettingsOf,
  noStrikeReason,
  type OptionQuote,
  recordRestingOrder,
  resolveWheelSettings,
  type StoredWheelSettings,
  selectionProfile,
  setPositionReason,
  sizeFor,
  startPlacing,
  strikeChoice,
  strikeFacts,
  type TradingProfile,
  tradingProfile,
  type WheelSettings,
  yieldFacts,
} from '@wh/trading'
import type { TickDefinition } from '../../ticks'
import { BUYBACK_PENDING, close, closeIfBoughtBack } from './buyback'
import { eventsOf, publishCapacity, strategyOf } from './events'
import { type FillDeps, ingestFills, ingestSettlements } from './fills'
import { cancelQuietly, fmt, MarketCache, maxBig, maxFee, optionQuotes, ourOrders, stepFailed } from './place-market'

export { BUYBACK_PENDING }

export const PLACE_TICK = 'trading-place'
export const PLACE_EVERY_MS = 10_000
/** live positions worked per run (TIGER_STYLE: a bound on everything) */
export const PLACE_BATCH = 500
/** subaccounts worked on at once */
export const PLACE_CONCURRENCY = 16

export interface PlaceDeps extends FillDeps {
  readonly redis: import('ioredis').Redis
  readonly clock: Clock
  readonly profile: TradingProfile
  readonly hooks?: PlaceHooks
  /** where a step's failure is told (the tick's log); its reason is on the row either way */
  readonly log?: { warn(obj: object, msg?: string): void }
}

/** Test seam, as in fund.ts: a crash test stops the step at this point by throwing. */
export interface PlaceHooks {
  /** a closing leg's buy-back order was accepted by the exchange; nothing of its answer stored or ingested */
  afterBuyBackSent?: (positionId: string) => Promise<void>
}

/** a wheel's leg carries the wheel's settings columns (docs/trading.md "Wheel settings") */
export interface Live extends StoredWheelSettings {
  id: string
  user_id: string
  asset: string
  side: 'put' | 'call'
  state: 'requested' | 'funding' | 'placing' | 'open' | 'closing'
  subaccount_id: string
  exchange_id: string | null
  stopped_at: Date | null
  collateral_amount: string
  collateral_currency: string
  funding_state: string | null
  funding_reason: string | null
  instrument: string | null
  size_e18: string | null
  filled_e18: string
  bought_e18: string
  window_ends_at: Date | null
  next_reprice_at: Date | null
  cancel_requested_at: Date | null
  created_at: Date
  paused: boolean
  /** the wheel's cost basis (e18 USD per unit), when a wheel opened this leg */
  cost_basis: string | null
  /** a wheel opened this leg (its strategy is the wheel's, docs/market-data.md) */
  wheel: boolean
  wheel_id: string | null
}

export interface PlaceSummary {
  locked: boolean
  steps: Record<string, number>
}

/** One run: every live position one step further. */
export async function runPlacing(deps: PlaceDeps): Promise<PlaceSummary> {
  const withEvents = { ...deps, strategyEvents: eventsOf(deps) }
  const r = await withCycleLock(deps.redis, () => placeAll(withEvents))
  return r.ran ? { locked: false, steps: r.value } : { locked: true, steps: {} }
}

/** One position one step further (the `position.advance` job); the caller holds the cycle lock. */
export const placePosition = (deps: PlaceDeps, id: string) => placeAll({ ...deps, strategyEvents: eventsOf(deps) }, id)

async function placeAll(deps: PlaceDeps, only?: string): Promise<Record<string, number>> {
  const { sql } = deps
  const now = deps.clock.now()
  const live = await sql<Live[]>`
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
    where p.state in ('requested', 'funding', 'placing', 'open', 'closing') ${only ? sql`and p.id = ${only}` : sql``}
    order by p.updated_at
    limit ${PLACE_BATCH}`
  const steps: Record<string, number> = {}
  const count = (k: string) => {
    steps[k] = (steps[k] ?? 0) + 1
  }
  const market = new MarketCache(deps.exchange)
  // positions of one subaccount one after another (they share its histories and open orders),
  // subaccounts side by side: a run's time grows with positions / PLACE_CONCURRENCY
  const bySub = new Map<string, Live[]>()
  for (const p of live) bySub.set(p.subaccount_id, [...(bySub.get(p.subaccount_id) ?? []), p])
  await mapLimit([...bySub.values()], PLACE_CONCURRENCY, async (group) => {
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
  })
  if (deps.strategyEvents) await publishCapacity(sql, deps.strategyEvents, deps.profile, now)
  return steps
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

async function wait(sql: Sql, id: string, reason: string): Promise<string> {
  await setPositionReason(sql, id, reason)
  return 'waiting'
}

interface Picked {
  expiry: number
  candidates: Instrument[]
  pick: OptionQuote
  /** a wheel's leg: the wheel's settings in effect (docs/trading.md "Wheel settings") */
  settings: WheelSettings | undefined
  /** the rule the strike was chosen by, and the candidates (docs/trading.md "Why: the decision log") */
  strikeReason: DecisionReason
  facts: DecisionFacts
}

/** No instrument now: what the leg waits for, and the facts of the decision. */
interface NotPicked {
  wait: string
  reason: DecisionReason
  facts: DecisionFacts
}

/**
 * The expiry and the strike (docs/trading.md "Placing" 1): a wheel's leg by the wheel's settings
 * (its tenor window; its target delta, or its distance from the index), a single leg by the profile.
 */
async function pickInstrument(deps: PlaceDeps, market: MarketCache, p: Live, now: Date): Promise<Picked | NotPicked> {
  const { profile } = deps
  const instruments = await market.options(p.asset)
  const settings = p.wheel ? resolveWheelSettings(p, profile) : undefined
  const rule = settings ? selectionProfile(profile, settings) : profile
  const expiries = expiryChoice(
    instruments.map((i) => i.option_details?.expiry ?? 0),
    now.getTime(),
    rule,
  )
  const expiry = expiries.chosen
  const facts = { expiries: expiryFacts(expiries, rule) }
  if (expiry === undefined) return { wait: 'no expiry inside the tenor window', reason: 'no_expiry_in_range', facts }
  const type = p.side === 'put' ? 'P' : 'C'
  const candidates = instruments.filter(
    (i) => i.option_details?.expiry === expiry && i.option_details.option_type === type,
  )
  const { quotes, indexE18 } = await optionQuotes(market, candidates, expiry, type)
  // a wheel's call is never sold below what the underlying cost (docs/trading.md "The wheel")
  const minStrike = BigInt(p.cost_basis ?? '0')
  const strikes = strikeChoice(quotes, p.side, rule, minStrike, { tenorMs: expiry * 1000 - now.getTime(), indexE18 })
  const chosen = { ...facts, strikes: strikeFacts(strikes, p.side, rule, minStrike) }
  if (settings?.strikeBy === 'otm') {
    const tolerance = profile.wheelSettingBounds.otmToleranceBps
    const pick = chooseStrikeByOtm(quotes, p.side, indexE18, settings.otmBps, tolerance, minStrike)
    if (!pick)
      return { wait: 'no strike near the target distance from the index', reason: 'no_strike_within_tolerance', facts }
    const byOtm = { ...chosen, strikes: { ...chosen.strikes, chosen: pick.instrument } }
    return { expiry, candidates, pick, settings, strikeReason: 'nearest_otm_distance', facts: byOtm }
  }
  const pick = strikes.chosen
  if (!pick)
    return { wait: 'no strike near the target delta', reason: noStrikeReason(strikes, p.side, rule), facts: chosen }
  return { expiry, candidates, pick, settings, strikeReason: 'nearest_target_delta', facts: chosen }
}

/** requested → placing: the instrument, the size and the window (docs/trading.md "Placing" 1–2). */
async function choose(deps: PlaceDeps, market: MarketCache, p: Live, now: Date): Promise<string> {
  const { sql, profile } = deps
  if (p.cancel_requested_at) return 'cancel_requested'
  if (p.exchange_id === null) return wait(sql, p.id, 'waiting for the subaccount to be created')
  // a wheel's leg logs why it waits or what it chose (docs/trading.md "Why: the decision log")
  const why = decider(deps, { wheelId: p.wheel_id, userId: p.user_id, positionId: p.id }, now)
  const waiting = (reason: DecisionReason, text: string, facts?: DecisionFacts) =>
    why('waiting', reason, facts).then(() => wait(sql, p.id, text))
  if (p.stopped_at) return waiting('subaccount_stopped', 'the subaccount is stopped by reconciliation')
  if (p.paused) return waiting('side_paused', `selling ${p.side}s on ${p.asset} is paused by a signal`)
  const picked = await pickInstrument(deps, market, p, now)
  if ('wait' in picked) return waiting(picked.reason, picked.wait, picked.facts)
  const { expiry, candidates, pick, settings, facts: chosen } = picked
  const inst = candidates.find((i) => i.instrument_name === pick.instrument) as Instrument
  const size = sizeFor(
    p.side,
    BigInt(p.collateral_amount),
    decimalsOf(p.collateral_currency) ?? 18,
    pick.strikeE18,
    toE18(inst.amount_step),
  )
  const min = maxBig(toE18(inst.minimum_amount), toE18(profile.sizes[p.asset as 'ETH' | 'BTC']?.min ?? '0'))
  if (size < min) {
    await failRequested(
      sql,
      p.id,
      `the collateral secures ${fmt(size)} contracts at strike ${fmt(pick.strikeE18)}, below the minimum ${fmt(min)}`,
    )
    return 'failed'
  }
  const index = toE18((await market.ticker(pick.instrument)).index_price)
  const perContract = p.side === 'put' ? pick.strikeE18 : index
  const yieldBps = annualisedYieldBps(pick.markE18, perContract, expiry * 1000 - now.getTime())
  const yielded = { ...chosen, yield: yieldFacts(pick.instrument, yieldBps, profile) }
  if (yieldBps < BigInt(profile.minAnnualisedYieldBps))
    return waiting('yield_below_floor', `premium yields ${yieldBps} bps a year, below the profile minimum`, yielded)
  const windowEnds = new Date(now.getTime() + profile.makerWindowMs)
  // the IV the leg is sold at (the chart and strategy history show it), from the ticker the strike was chosen on
  const ivE18 = markIvE18(await market.ticker(pick.instrument))
  const placed = await startPlacing(sql, p.id, {
    instrument: pick.instrument,
    strikeE18: pick.strikeE18,
    expirySec: expiry,
    sizeE18: size,
    ivE18,
    legSettings: settings ? legSettingsOf(p.side, settings) : null,
    windowEndsAt: windowEnds,
    now,
  })
  if (placed) {
    await why('expiry_chosen', 'nearest_expiry_in_window', { expiries: chosen.expiries })
    await why('strike_chosen', picked.strikeReason, { strikes: yielded.strikes, yield: yielded.yield })
  }
  await publishChosen(deps, market, p, pick, index, now)
  return 'chosen'
}

/** WS /ws/strategies: the chosen instrument's quote cached and `cycle_opened` published. */
async function publishChosen(
  deps: PlaceDeps,
  market: MarketCache,
  p: Live,
  pick: OptionQuote,
  index: bigint,
  now: Date,
): Promise<void> {
  if (deps.strategyEvents) {
    const t = await market.ticker(pick.instrument)
    const q = {
      instrument: pick.instrument,
      ts: now.toISOString(),
      mark: fmt(pick.markE18),
      index: fmt(index),
      iv: t.option_pricing?.iv ?? null,
      delta: t.option_pricing?.delta ?? null,
    }
    await deps.strategyEvents.cacheQuote(q)
    const { ts, instrument, mark, iv, delta } = q
    await deps.strategyEvents.publish(p.asset, {
      ts,
      event: 'cycle_opened',
      strategy: strategyOf(p.wheel, p.side),
      side: p.side,
      instrument,
      strike: fmt(pick.strikeE18),
      expiry: new Date(pick.expirySec * 1000).toISOString(),
      mark,
      index: q.index,
      iv,
      delta,
    })
  }
}

/** placing: keep one order resting at the window's price; end the window (docs/trading.md 3–4). */
async function work(deps: PlaceDeps, market: MarketCache, p: Live, now: Date): Promise<string> {
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
    amount: fmt(remaining),
    limit_price: fmt(bid),
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
  await deps.strategyEvents?.publish(p.asset, {
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
      amount: fmt(remaining),
      limit_price: fmt(price),
      max_fee: maxFee(t, price),
      time_in_force: 'post_only',
      label: p.id,
    })
    await recordRestingOrder(sql, p.id, order.order_id, nextReprice)
    await deps.strategyEvents?.publish(p.asset, {
      ts: now.toISOString(),
      event: 'order',
      strategy: strategyOf(p.wheel, p.side),
      instrument,
      step: resting.length > 0 ? 'repriced' : 'placed',
      price: fmt(price),
    })
    return 'placed'
  } catch (e) {
    if ((e as { code?: string }).code === 'EXCHANGE_ORDER_REJECTED')
      return wait(sql, p.id, `the exchange refused the order: ${errorMessage(e)}`)
    throw e
  }
}

export const placeTick: TickDefinition = {
  name: PLACE_TICK,
  queue: 'trading',
  everyMs: PLACE_EVERY_MS,
  process: async (_job, ctx) => {
    const d = ctx.deps
    return runPlacing({
      sql: d.sql,
      exchange: d.exchange,
      redis: d.redis,
      clock: d.clock,
      platformFeeRate: d.config.platformFeeRate,
      profile: tradingProfile(d.config.tradingProfile),
      log: ctx.log,
    })
  },
}
