/**
 * The strategy events trading tells (WS /ws/strategies, docs/market-data.md "Strategy events"),
 * as a port: the placing step, the fills and the wheel runner say what happened through
 * `StrategyEvents`; @wh/market, which owns the stream (its Redis names, its publish script, its
 * schema), implements it (`strategyEvents`, `strategyEventsOn` in @wh/market) and the worker hands
 * that publisher over in the deps.
 *
 * Why a port rather than an import: @wh/market depends on @wh/trading (its strategy statistics read
 * trading's profiles and choices), so trading importing market would make the packages a cycle.
 * The shapes below are plain types; market's publisher passes them to its `publishStrategyEvent`,
 * which takes the stream's schema type, so a shape here the schema does not accept fails market's
 * typecheck rather than a subscriber's parse.
 *
 * Every figure is the strategy's (aggregated over every user's legs of a cycle), never a user id
 * or one user's amount.
 */

/** The strategy an event is about: a wheel's legs, or single puts / calls sold on request. */
export type EventStrategy = 'wheel' | 'put' | 'call'
type Side = 'put' | 'call'

interface CycleOpened {
  ts: string
  event: 'cycle_opened'
  strategy: EventStrategy
  side: Side
  instrument: string
  strike: string
  expiry: string
  mark: string
  index: string
  iv: string | null
  delta: string | null
}
interface OrderPlaced {
  ts: string
  event: 'order'
  strategy: EventStrategy
  instrument: string
  step: 'placed' | 'repriced'
  price: string
}
interface Filled {
  ts: string
  event: 'fill'
  strategy: EventStrategy
  instrument: string
  price: string
  cycleContracts: string
  cyclePremium: string
}
interface WindowEnded {
  ts: string
  event: 'window_end'
  strategy: EventStrategy
  instrument: string
  decision: 'crossed' | 'cancelled' | 'completed'
  reason: string
}
interface Settled {
  ts: string
  event: 'settlement'
  strategy: EventStrategy
  instrument: string
  expiry: string
  outcome: 'itm' | 'otm'
  cycleSettlementCost: string
  cycleRealisedReturnPct: string | null
}
interface Capacity {
  ts: string
  event: 'capacity'
  strategy: EventStrategy
  livePositions: number
  contractsOpen: string
  contractsPlacing: string
  collateral: { USDC: string; underlying: string }
  limits: { minContracts: string; maxContractsPerUser: string }
}
interface WheelLeg {
  ts: string
  event: 'wheel_leg'
  strategy: 'wheel'
  side: Side
}

/** An event as trading hands it over (the stream adds its head: type, asset, sequence number). */
export type TradingStrategyEvent = CycleOpened | OrderPlaced | Filled | WindowEnded | Settled | Capacity | WheelLeg

/** What an instrument was chosen at (cached beside `cycle_opened`, read by GET /:asset/strategies). */
export interface ChosenQuote {
  instrument: string
  ts: string
  mark: string
  index: string
  iv: string | null
  delta: string | null
}

/**
 * Where trading's strategy events go. A publish never fails its caller: Redis trouble loses the
 * event (the next one carries a newer sequence number, and GET /:asset/strategies reads Postgres).
 */
export interface StrategyEvents {
  publish(asset: string, body: TradingStrategyEvent): Promise<void>
  cacheQuote(q: ChosenQuote): Promise<void>
}
