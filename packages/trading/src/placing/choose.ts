/**
 * The placing step's first move, `requested → placing` (docs/trading.md "Placing" 1–2): the expiry
 * and the strike (a wheel's leg by the wheel's settings, a single leg by the profile), the size from
 * the collateral, the yield floor, then the maker window starts; a wheel's leg logs why it waits or
 * what it chose (docs/trading.md "Why: the decision log") and `cycle_opened` is published.
 */
import { decimalsOf, maxBigint } from '@wh/core'
import { fromE18, type Instrument, toE18 } from '@wh/exchange'
import { decider } from '../decider'
import {
  type DecisionFacts,
  type DecisionReason,
  expiryFacts,
  noStrikeReason,
  strikeFacts,
  yieldFacts,
} from '../decision-facts'
import { annualisedYieldBps, expiryChoice, markIvE18, type OptionQuote, sizeFor, strikeChoice } from '../placing'
import { failRequested, startPlacing } from '../position-store'
import { strategyOf } from '../strategy-events/publish'
import {
  chooseStrikeByOtm,
  legSettingsOf,
  resolveWheelSettings,
  selectionProfile,
  type WheelSettings,
} from '../wheel-settings'
import { type MarketCache, optionQuotes, wait } from './market'
import type { Live, PlaceDeps } from './types'

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
export async function choose(deps: PlaceDeps, market: MarketCache, p: Live, now: Date): Promise<string> {
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
  const min = maxBigint(toE18(inst.minimum_amount), toE18(profile.sizes[p.asset as 'ETH' | 'BTC']?.min ?? '0'))
  if (size < min) {
    await failRequested(
      sql,
      p.id,
      `the collateral secures ${fromE18(size)} contracts at strike ${fromE18(pick.strikeE18)}, below the minimum ${fromE18(min)}`,
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
  const t = await market.ticker(pick.instrument)
  const q = {
    instrument: pick.instrument,
    ts: now.toISOString(),
    mark: fromE18(pick.markE18),
    index: fromE18(index),
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
    strike: fromE18(pick.strikeE18),
    expiry: new Date(pick.expirySec * 1000).toISOString(),
    mark,
    index: q.index,
    iv,
    delta,
  })
}
