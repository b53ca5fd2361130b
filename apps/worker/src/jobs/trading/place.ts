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
import {
  DERIVE_FEE_SCHEDULE,
  type DeriveClient,
  ExchangeError,
  ExchangeInsufficientMarginError,
  type Instrument,
  type Order,
  toE18,
} from '@wh/exchange'
import { markIvE18 } from '@wh/market'
import {
  annualisedYieldBps,
  askPrice,
  chooseStrikeByOtm,
  crossFloor,
  type DecisionFacts,
  type DecisionReason,
  E18,
  expiryChoice,
  expiryFacts,
  legSettingsOf,
  noStrikeReason,
  type OptionQuote,
  resolveWheelSettings,
  roundDownToTick,
  type StoredWheelSettings,
  selectionProfile,
  sizeFor,
  strikeChoice,
  strikeFacts,
  type TradingProfile,
  tradingProfile,
  type WheelSettings,
  yieldFacts,
} from '@wh/trading'
import type { TickDefinition } from '../../ticks'
import { withCycleLock } from '../exchange/cycle-lock'
import { decider } from './decide'
import { eventsOf, publishCapacity, strategyOf } from './events'
import { type FillDeps, ingestFills, ingestSettlements } from './fills'

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
}

/** Test seam, as in fund.ts: a crash test stops the step at this point by throwing. */
export interface PlaceHooks {
  /** a closing leg's buy-back order was accepted by the exchange; nothing of its answer stored or ingested */
  afterBuyBackSent?: (positionId: string) => Promise<void>
}

/** a wheel's leg carries the wheel's settings columns (docs/trading.md "Wheel settings") */
interface Live extends StoredWheelSettings {
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

const BPS = 10_000n

/** One run: every live position one step further. */
export async function runPlacing(deps: PlaceDeps): Promise<PlaceSummary> {
  const withEvents = { ...deps, strategyEvents: eventsOf(deps) }
  const r = await withCycleLock(deps.redis, () => placeAll(withEvents))
  return r.ran ? { locked: false, steps: r.value } : { locked: true, steps: {} }
}

async function placeAll(deps: PlaceDeps): Promise<Record<string, number>> {
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
    where p.state in ('requested', 'funding', 'placing', 'open', 'closing')
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
      } catch {
        count('error')
        return
      }
    }
    for (const p of group) {
      try {
        count(await step(deps, market, p, now))
      } catch (e) {
        // one position's trouble (an exchange refusal, a timeout) must not stop the others
        count('error')
        await sql`update positions set reason = ${`placing step failed: ${errorMessage(e)}`.slice(0, 500)},
          updated_at = now() where id = ${p.id}`
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
        await sql`update positions set state = 'requested', reason = null, updated_at = now()
          where id = ${p.id} and state = 'funding'`
        return 'funded'
      }
      if (p.funding_state === 'failed') {
        await sql`update positions set state = 'failed', closed_at = now(), updated_at = now(),
          reason = ${`funding the subaccount failed: ${p.funding_reason ?? 'unknown'}`}
          where id = ${p.id} and state = 'funding'`
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
  await sql`update positions set reason = ${reason}, updated_at = now() where id = ${id}`
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
    await sql`update positions set state = 'failed', closed_at = now(), updated_at = now(),
      reason = ${`the collateral secures ${fmt(size)} contracts at strike ${fmt(pick.strikeE18)}, below the minimum ${fmt(min)}`}
      where id = ${p.id} and state = 'requested'`
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
  const [placed] = await sql`update positions set state = 'placing', instrument = ${pick.instrument},
    strike_e18 = ${pick.strikeE18.toString()}, expiry_sec = ${expiry}, size_e18 = ${size.toString()},
    iv_e18 = ${ivE18 === null ? null : ivE18.toString()},
    leg_settings = ${settings ? sql.json(legSettingsOf(p.side, settings) as never) : null},
    window_ends_at = ${windowEnds}, next_reprice_at = ${now}, reason = null, updated_at = now()
    where id = ${p.id} and state = 'requested' returning id`
  if (placed) {
    await why('expiry_chosen', 'nearest_expiry_in_window', { expiries: chosen.expiries })
    await why('strike_chosen', picked.strikeReason, { strikes: yielded.strikes, yield: yielded.yield })
  }
  await publishChosen(deps, market, p, pick, index, now)
  return 'chosen'
}

/** One expiry's options of a side with a price: their quotes, and the index their tickers carry. */
async function optionQuotes(
  market: MarketCache,
  candidates: readonly Instrument[],
  expiry: number,
  type: 'P' | 'C',
): Promise<{ quotes: OptionQuote[]; indexE18: bigint }> {
  const quotes: OptionQuote[] = []
  let indexE18 = 0n
  for (const i of candidates) {
    const t = await market.ticker(i.instrument_name)
    indexE18 = indexE18 > 0n ? indexE18 : toE18(t.index_price)
    if (!t.option_pricing) continue
    quotes.push({
      instrument: i.instrument_name,
      expirySec: expiry,
      strikeE18: toE18(i.option_details?.strike ?? '0'),
      type,
      deltaBps: Math.round(Number(t.option_pricing.delta) * 10_000),
      markE18: toE18(t.mark_price),
    })
  }
  return { quotes, indexE18 }
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
  const { sql, profile, exchange } = deps
  const subId = Number(p.exchange_id)
  const instrument = p.instrument as string
  const size = BigInt(p.size_e18 ?? '0')
  const [fresh] = await sql<{ filled_e18: string }[]>`select filled_e18::text from positions where id = ${p.id}`
  const filled = BigInt(fresh?.filled_e18 ?? p.filled_e18)
  const remaining = size - filled
  const resting = await ourOrders(exchange, subId, p.id)
  const over = now >= (p.window_ends_at ?? now)
  const halt = p.cancel_requested_at !== null || p.paused || p.stopped_at !== null
  if (remaining <= 0n || over || halt) {
    for (const o of resting) await cancelQuietly(exchange, subId, o)
    let crossed = false
    if (remaining > 0n && over && !halt && profile.endOfWindow === 'cross') {
      const t = await market.ticker(instrument, true)
      const bid = toE18(t.best_bid_price)
      if (bid > 0n && bid >= crossFloor(toE18(t.mark_price), profile)) {
        await exchange.order({
          subaccount_id: subId,
          instrument_name: instrument,
          direction: 'sell',
          amount: fmt(remaining),
          limit_price: fmt(bid),
          max_fee: maxFee(t.index_price),
          time_in_force: 'ioc',
          label: p.id,
        })
        crossed = true
        await ingestFills(deps, { id: p.subaccount_id, userId: p.user_id, exchangeId: subId })
      }
    }
    const [after] = await sql<{ filled_e18: string }[]>`select filled_e18::text from positions where id = ${p.id}`
    const done = BigInt(after?.filled_e18 ?? '0')
    const why = p.cancel_requested_at
      ? 'cancelled by the user'
      : p.paused
        ? 'paused by a signal'
        : p.stopped_at
          ? 'the subaccount was stopped'
          : remaining <= 0n
            ? null
            : 'the maker window ended'
    await sql`update positions set state = ${done > 0n ? 'open' : 'cancelled'}, order_id = null,
      next_reprice_at = null, reason = ${why}, updated_at = now(),
      closed_at = ${done > 0n ? null : now}
      where id = ${p.id} and state = 'placing'`
    if (done === 0n && why === 'the maker window ended')
      await decider(deps, { wheelId: p.wheel_id, userId: p.user_id, positionId: p.id }, now)('skipped', 'window_ended')
    await deps.strategyEvents?.publish(p.asset, {
      ts: now.toISOString(),
      event: 'window_end',
      strategy: strategyOf(p.wheel, p.side),
      instrument,
      decision: remaining <= 0n ? 'completed' : crossed ? 'crossed' : 'cancelled',
      reason: crossed
        ? 'the maker window ended: the rest was sold at the best bid'
        : (why ??
          (remaining <= 0n ? 'everything offered was sold' : 'the maker window ended: no bid within the cross floor')),
    })
    return done > 0n ? 'opened' : 'cancelled'
  }
  if (resting.length > 0 && p.next_reprice_at && now < p.next_reprice_at) return 'resting'
  const t = await market.ticker(instrument, true)
  const windowStart = (p.window_ends_at?.getTime() ?? now.getTime()) - profile.makerWindowMs
  const price = askPrice(toE18(t.mark_price), now.getTime() - windowStart, profile, toE18(t.tick_size))
  if (resting.length === 1 && toE18(resting[0]?.limit_price ?? '0') === price) {
    await sql`update positions set next_reprice_at = ${new Date(now.getTime() + profile.repriceEveryMs)},
      updated_at = now() where id = ${p.id}`
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
      max_fee: maxFee(t.index_price),
      time_in_force: 'post_only',
      label: p.id,
    })
    await sql`update positions set order_id = ${order.order_id},
      next_reprice_at = ${new Date(now.getTime() + profile.repriceEveryMs)}, reason = null, updated_at = now()
      where id = ${p.id} and state = 'placing'`
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

/** Marks `order_id` of a closing leg between committing to send its buy-back and the exchange's answer. */
export const BUYBACK_PENDING = 'buyback-pending'

interface ClosingRow {
  instrument: string
  expiry_sec: number
  filled_e18: string
  bought_e18: string
  close_limit_e18: string | null
  order_id: string | null
}

/**
 * closing: buy back what is still short, once (docs/trading.md "Buying a leg back").
 *
 * 1. remaining = filled − bought, read AFTER this run ingested the subaccount's fills. 0 → `closed`.
 * 2. No order of this closing sent yet (`order_id` null): mark the leg (`order_id` =
 *    BUYBACK_PENDING, a conditional UPDATE: of two overlapping runs one wins), then send ONE
 *    immediate-or-cancel buy of `remaining` at the stored limit, labelled with the position id,
 *    reduce-only; ingest its fills at once; bought in full → `closed`, else → `open` with why.
 * 3. A refusal (margin: a covered call's subaccount may hold too little USDC; any other refusal)
 *    → `open` with the reason: the leg runs to expiry unless the user asks again (a new quote).
 *
 * Crash safety: an IOC order lives only for the instant it is matched, so once sent nothing of it
 * can fill later. A run that dies after sending (before ingesting, or before storing the outcome)
 * leaves the leg `closing` with the marker set; the next run ingests the subaccount's fills FIRST,
 * so whatever that order bought is in `bought_e18` before anything else happens: all of it → `closed`;
 * less → the marker says an order was already sent for this quote, so it sends nothing and returns
 * the leg to `open`. Either way nothing is bought twice, and never more than the leg is short (the
 * amount comes from the ingested fills and the order is reduce-only). A run that dies after the
 * marker but before sending also returns the leg to `open`: the user asks again, at a fresh price.
 */
async function close(deps: PlaceDeps, p: Live, now: Date): Promise<string> {
  const { sql } = deps
  const [c] = await sql<ClosingRow[]>`
    select instrument, expiry_sec::float8 as expiry_sec, filled_e18::text, bought_e18::text,
      close_limit_e18::text, order_id
    from positions where id = ${p.id} and state = 'closing'`
  if (!c) return 'moved'
  const remaining = BigInt(c.filled_e18) - BigInt(c.bought_e18)
  if (remaining <= 0n) return finishClose(sql, p.id)
  // an expired option cannot be bought: the settlement (ingested above, or next run) ends the leg
  if (c.expiry_sec * 1000 <= now.getTime()) return 'waiting_settlement'
  if (c.order_id !== null)
    return reopen(
      sql,
      p.id,
      `the buy-back order bought ${fmt(BigInt(c.bought_e18))} of ${fmt(BigInt(c.filled_e18))}: the rest stays sold`,
    )
  if (p.stopped_at) return reopen(sql, p.id, 'the subaccount is stopped by reconciliation: the leg stays sold')
  const [marked] = await sql`update positions set order_id = ${BUYBACK_PENDING}, updated_at = now()
    where id = ${p.id} and state = 'closing' and order_id is null returning id`
  if (!marked) return 'moved'
  const sent = await sendBuyBack(deps, p, c, remaining)
  if (sent.kind === 'refused') return reopen(sql, p.id, sent.reason)
  if (sent.kind === 'unknown') return 'buyback_unknown' // the next run decides from the ingested fills
  await deps.hooks?.afterBuyBackSent?.(p.id)
  await sql`update positions set order_id = ${sent.orderId}, updated_at = now()
    where id = ${p.id} and state = 'closing' and order_id = ${BUYBACK_PENDING}`
  await ingestFills(deps, { id: p.subaccount_id, userId: p.user_id, exchangeId: Number(p.exchange_id) })
  const [after] = await sql<{ filled_e18: string; bought_e18: string }[]>`
    select filled_e18::text, bought_e18::text from positions where id = ${p.id}`
  const left = BigInt(after?.filled_e18 ?? '0') - BigInt(after?.bought_e18 ?? '0')
  if (left <= 0n) return finishClose(sql, p.id)
  return reopen(
    sql,
    p.id,
    `no ask at or below the limit ${fmt(BigInt(c.close_limit_e18 ?? '0'))} for ${fmt(left)} contracts: they stay sold`,
  )
}

type BuyBackSend =
  | { kind: 'sent'; orderId: string }
  /** the exchange refused it: nothing was bought */
  | { kind: 'refused'; reason: string }
  /** no answer (transport, timeout): it may have landed; the fills will tell */
  | { kind: 'unknown'; reason: string }

/**
 * Sends a closing leg's buy-back: immediate-or-cancel, reduce-only, `amountE18` at the stored limit
 * rounded down to the tick (never above what the user accepted), labelled with the position id.
 */
async function sendBuyBack(
  deps: Pick<PlaceDeps, 'exchange'>,
  p: Pick<Live, 'id' | 'exchange_id'>,
  c: Pick<ClosingRow, 'instrument' | 'close_limit_e18'>,
  amountE18: bigint,
): Promise<BuyBackSend> {
  try {
    const inst = await deps.exchange.getInstrument(c.instrument)
    const t = await deps.exchange.getTicker(c.instrument)
    const limit = roundDownToTick(BigInt(c.close_limit_e18 ?? '0'), toE18(inst.tick_size))
    if (limit <= 0n) return { kind: 'refused', reason: 'the buy-back has no limit price' }
    const { order } = await deps.exchange.order({
      subaccount_id: Number(p.exchange_id),
      instrument_name: c.instrument,
      direction: 'buy',
      amount: fmt(amountE18),
      limit_price: fmt(limit),
      max_fee: fmt(buyBackMaxFee(toE18(t.index_price), amountE18)),
      time_in_force: 'ioc',
      reduce_only: true,
      label: p.id,
    })
    return { kind: 'sent', orderId: order.order_id }
  } catch (e) {
    if (e instanceof ExchangeInsufficientMarginError)
      return { kind: 'refused', reason: `the exchange refused the buy-back for margin: ${errorMessage(e)}` }
    if (e instanceof ExchangeError && !e.retryable)
      return { kind: 'refused', reason: `the exchange refused the buy-back: ${errorMessage(e)}` }
    return { kind: 'unknown', reason: errorMessage(e) }
  }
}

/**
 * The most fee a buy-back accepts per contract: the taker base fee spread over the amount (the
 * base is per order) plus twice the taker rate on the index (the rate part is capped below that).
 */
function buyBackMaxFee(indexE18: bigint, amountE18: bigint): bigint {
  const f = DERIVE_FEE_SCHEDULE.option
  const base = (f.baseFee * E18 + amountE18 - 1n) / amountE18
  return base + (2n * indexE18 * f.takerRate) / E18
}

async function finishClose(sql: Sql, id: string): Promise<string> {
  await sql`update positions set state = 'closed', order_id = null, reason = null, closed_at = now(),
    updated_at = now() where id = ${id} and state = 'closing'`
  return 'closed'
}

/** closing → open: the leg stays sold (to expiry) with the reason; the user may ask again. */
async function reopen(sql: Sql, id: string, reason: string): Promise<string> {
  await sql`update positions set state = 'open', order_id = null, cancel_requested_at = null,
    reason = ${reason.slice(0, 500)}, updated_at = now()
    where id = ${id} and state = 'closing'`
  return 'close_refused'
}

/**
 * open: nothing to do, unless buy-back fills that were not visible when its closing ended (an
 * exchange's history may lag) have since bought the whole leg: then it is closed.
 */
async function closeIfBoughtBack(sql: Sql, p: Live): Promise<string> {
  // as read at the start of the run; the UPDATE re-checks on the row as it is now
  if (BigInt(p.bought_e18) <= 0n) return 'open'
  const [r] = await sql`update positions set state = 'closed', order_id = null, closed_at = now(), updated_at = now()
    where id = ${p.id} and state = 'open' and bought_e18 > 0 and bought_e18 >= filled_e18 returning id`
  return r ? 'closed' : 'open'
}

async function ourOrders(exchange: DeriveClient, subId: number, positionId: string): Promise<Order[]> {
  const { orders } = await exchange.getOpenOrders(subId)
  return orders.filter((o) => o.label === positionId)
}

async function cancelQuietly(exchange: DeriveClient, subId: number, o: Order): Promise<void> {
  try {
    await exchange.cancel({ subaccount_id: subId, instrument_name: o.instrument_name, order_id: o.order_id })
  } catch (e) {
    // filled or expired meanwhile: nothing rests any more, which is what we wanted
    if ((e as { code?: string }).code !== 'EXCHANGE_ORDER_REJECTED') throw e
  }
}

/** The most fee we accept per contract: the taker fee's base plus 0.1 % of the index, in USD. */
function maxFee(index: string): string {
  return fmt(E18 + (toE18(index) * 10n) / BPS)
}

function maxBig(a: bigint, b: bigint): bigint {
  return a > b ? a : b
}

function fmt(e18: bigint): string {
  const neg = e18 < 0n
  const abs = neg ? -e18 : e18
  const int = abs / E18
  const frac = (abs % E18).toString().padStart(18, '0').replace(/0+$/, '')
  return `${neg ? '-' : ''}${int}${frac ? `.${frac}` : ''}`
}

/** The run's view of the market: instruments and tickers read once per run. */
class MarketCache {
  readonly #options = new Map<string, Promise<Instrument[]>>()
  readonly #tickers = new Map<string, ReturnType<DeriveClient['getTicker']>>()
  constructor(private readonly exchange: DeriveClient) {}
  options(asset: string): Promise<Instrument[]> {
    let v = this.#options.get(asset)
    if (!v) {
      v = this.exchange.getInstruments({ currency: asset, instrument_type: 'option' })
      this.#options.set(asset, v)
    }
    return v
  }
  /** `fresh`: read again (a price to send an order at must not be a run old) */
  ticker(name: string, fresh = false): ReturnType<DeriveClient['getTicker']> {
    let v = fresh ? undefined : this.#tickers.get(name)
    if (!v) {
      v = this.exchange.getTicker(name)
      this.#tickers.set(name, v)
    }
    return v
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
    })
  },
}
