/**
 * The strategy event stream (WS /ws/strategies): what the worker's trading ticks and the signals
 * route publish on Redis pub/sub, per asset, with a per-asset sequence number; the API's fan-out
 * hub forwards each message byte for byte. Events describe the platform's strategy (aggregated
 * over every user): never a user id, never one user's amount. Shapes are TypeBox schemas, in the
 * OpenAPI document and docs/market-data.md.
 */
import type { ChosenQuote } from '@wh/trading'
import type { Redis } from 'ioredis'
import Type, { type Static } from 'typebox'
import { MARKET_NAMES, type MarketNames } from './channels'

/** Redis names of the strategy stream, under the same namespace and `{market}` hash tag as the prices. */
export interface StrategyNames {
  /** per-asset sequence counter of strategy events */
  seq(asset: string): string
  /** the quote an instrument was chosen at (cycle_opened), for GET /:asset/strategies */
  quote(instrument: string): string
  /** the pub/sub channel of an asset's strategy events */
  channel(asset: string): string
}

const PRICE_CHANNEL_STEM = 'market:prices:'

/** The strategy names beside `names` (their namespace is read from the price channel's name). */
export function strategyNames(names: MarketNames = MARKET_NAMES): StrategyNames {
  const stem = names.priceChannel('')
  const ns = stem.endsWith(PRICE_CHANNEL_STEM) ? stem.slice(0, -PRICE_CHANNEL_STEM.length) : ''
  const tag = `${ns}{market}`
  return Object.freeze({
    seq: (asset: string) => `${tag}:strategies:seq:${asset}`,
    quote: (instrument: string) => `${tag}:strategies:quote:${instrument}`,
    channel: (asset: string) => `${ns}market:strategies:${asset}`,
  })
}

/** How long a chosen instrument's quote is kept: past the longest tenor of any profile. */
export const STRATEGY_QUOTE_TTL_MS = 14 * 86_400_000
/** Largest event body published (a bound: events are small by construction). */
export const MAX_STRATEGY_EVENT_BYTES = 2_048

const Decimal = (description: string) => Type.String({ pattern: '^-?[0-9]+(\\.[0-9]+)?$', description })
const NullableDecimal = (description: string) => Type.Union([Decimal(description), Type.Null()])
const Kind = Type.Union([Type.Literal('wheel'), Type.Literal('put'), Type.Literal('call')], {
  description: 'the strategy: wheel legs, or single puts / calls sold on request',
})
const Side = Type.Union([Type.Literal('put'), Type.Literal('call')])

const head = {
  type: Type.Literal('strategy'),
  asset: Type.String({ description: 'underlying, e.g. ETH' }),
  seq: Type.Integer({ minimum: 1, description: 'per-asset sequence number, +1 per event' }),
  ts: Type.String({ format: 'date-time', description: 'when it happened (the publisher’s clock)' }),
}
const event = <E extends string, P extends Type.TProperties>(name: E, props: P, description: string) =>
  Type.Object({ ...head, event: Type.Literal(name), ...props }, { additionalProperties: false, description })

export const StrategyEvent = Type.Union(
  [
    event(
      'cycle_opened',
      {
        strategy: Kind,
        side: Side,
        instrument: Type.String(),
        strike: Decimal('USD'),
        expiry: Type.String({ format: 'date-time' }),
        mark: Decimal('option mark at the choice, USD'),
        index: Decimal('index at the choice, USD'),
        iv: NullableDecimal('implied volatility at the choice, a fraction; display only'),
        delta: NullableDecimal('option delta at the choice; display only'),
      },
      'an instrument was chosen for a leg (the placing step starts)',
    ),
    event(
      'order',
      {
        strategy: Kind,
        instrument: Type.String(),
        step: Type.Union([Type.Literal('placed'), Type.Literal('repriced')]),
        price: Decimal('the maker ask, USD per contract'),
      },
      'a maker order was placed or repriced',
    ),
    event(
      'fill',
      {
        strategy: Kind,
        instrument: Type.String(),
        price: Decimal('price of the latest fill, USD per contract'),
        cycleContracts: Decimal('contracts sold in this cycle so far, over every user'),
        cyclePremium: Decimal('gross premium of this cycle so far, USDC, over every user'),
      },
      'fills were recorded (aggregated over the cycle)',
    ),
    event(
      'window_end',
      {
        strategy: Kind,
        instrument: Type.String(),
        decision: Type.Union([Type.Literal('crossed'), Type.Literal('cancelled'), Type.Literal('completed')]),
        reason: Type.String(),
      },
      'the end of a maker window: the rest crossed at the bid, cancelled, or nothing left to sell',
    ),
    event(
      'settlement',
      {
        strategy: Kind,
        instrument: Type.String(),
        expiry: Type.String({ format: 'date-time' }),
        outcome: Type.Union([Type.Literal('itm'), Type.Literal('otm')]),
        cycleSettlementCost: Decimal('settlement paid by the cycle, USDC, over every user'),
        cycleRealisedReturnPct: NullableDecimal('net of the cycle over its collateral, percent'),
      },
      'a cycle expired and was settled',
    ),
    event(
      'signal',
      {
        sides: Type.Array(Side),
        action: Type.Union([Type.Literal('pause'), Type.Literal('resume')]),
        reason: Type.Union([Type.String(), Type.Null()]),
      },
      'selling paused or resumed by a signal',
    ),
    event(
      'capacity',
      {
        strategy: Kind,
        livePositions: Type.Integer({ description: 'legs requested, placing or open' }),
        contractsOpen: Decimal('contracts sold and not yet expired'),
        contractsPlacing: Decimal('contracts still offered in maker windows'),
        collateral: Type.Object({
          USDC: Decimal('cash securing puts'),
          underlying: Decimal('underlying securing calls'),
        }),
        limits: Type.Object({
          minContracts: Decimal('smallest order (profile)'),
          maxContractsPerUser: Decimal('largest position per user (profile)'),
        }),
      },
      'what the strategy holds against its limits (published when it changes)',
    ),
    event(
      'wheel_leg',
      { strategy: Type.Literal('wheel'), side: Side },
      'the wheel runner requested a next leg (a put with cash, a call with the underlying)',
    ),
  ],
  { $id: 'StrategyEvent' },
)
export type StrategyEvent = Static<typeof StrategyEvent>
/** An event as a publisher hands it over: without the head the publish script writes. */
export type StrategyEventBody = DistributiveOmit<StrategyEvent, 'type' | 'asset' | 'seq'>
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never

// KEYS: seq. ARGV: message head (up to `"seq":`), tail, channel.
const PUBLISH = `
local seq = redis.call('INCR', KEYS[1])
redis.call('PUBLISH', ARGV[3], ARGV[1] .. seq .. ARGV[2])
return seq`

/** Publishes one event with the asset's next sequence number (one atomic script); resolves the number. */
export async function publishStrategyEvent(
  redis: Redis,
  names: StrategyNames,
  asset: string,
  body: StrategyEventBody,
): Promise<number> {
  const h = `{"type":"strategy","asset":${JSON.stringify(asset)},"seq":`
  const tail = `,${JSON.stringify(body).slice(1)}`
  if (h.length + tail.length > MAX_STRATEGY_EVENT_BYTES) throw new Error(`strategy event too large (${body.event})`)
  return (await redis.eval(PUBLISH, 1, names.seq(asset), h, tail, names.channel(asset))) as number
}

/** The latest sequence number of each asset (0 before any event). */
export async function readStrategySeqs(redis: Redis, names: StrategyNames, assets: readonly string[]) {
  if (assets.length === 0) return []
  const raws = await redis.mget(...assets.map((a) => names.seq(a)))
  return raws.map((r) => Number(r ?? '0'))
}

/** What an instrument was chosen at (cached by the cycle_opened publisher; @wh/trading's placing step says it). */
export type { ChosenQuote }

export async function cacheChosenQuote(redis: Redis, names: StrategyNames, q: ChosenQuote): Promise<void> {
  await redis.set(names.quote(q.instrument), JSON.stringify(q), 'PX', STRATEGY_QUOTE_TTL_MS)
}

export async function readChosenQuotes(
  redis: Redis,
  names: StrategyNames,
  instruments: readonly string[],
): Promise<(ChosenQuote | undefined)[]> {
  if (instruments.length === 0) return []
  const raws = await redis.mget(...instruments.map((i) => names.quote(i)))
  return raws.map((r) => (r ? (JSON.parse(r) as ChosenQuote) : undefined))
}
