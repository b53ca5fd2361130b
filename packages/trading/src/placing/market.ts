/**
 * What the placing step and the buy-back share (docs/trading.md "Placing"): the run's view of the
 * market (instruments and tickers read once per run), our resting orders, and e18 figures as the
 * exchange's decimal strings.
 */

import { errorMessage, maxBigint } from '@wh/core'
import type { Queryable } from '@wh/db'
import {
  ceilToE12,
  type DeriveClient,
  fromE18,
  type Instrument,
  type Order,
  orderMaxFeeFloorE18,
  toE18,
} from '@wh/exchange'
import { E18, type OptionQuote, optionQuoteOf } from '../placing'
import { setPositionReason } from '../position-store'
import type { StepLog } from './types'

const BPS = 10_000n

/**
 * An error that stopped positions' step: its text as each row's reason (what the user and the desk
 * see) and in the log, never swallowed.
 */
export async function stepFailed(
  deps: { sql: Queryable; log?: StepLog | undefined },
  positions: readonly { id: string }[],
  what: string,
  e: unknown,
): Promise<void> {
  const reason = `${what}: ${errorMessage(e)}`.slice(0, 500)
  for (const p of positions) await setPositionReason(deps.sql, p.id, reason)
  deps.log?.warn({ positions: positions.map((p) => p.id), err: e }, reason)
}

export async function ourOrders(exchange: DeriveClient, subId: number, positionId: string): Promise<Order[]> {
  const { orders } = await exchange.getOpenOrders(subId)
  return orders.filter((o) => o.label === positionId)
}

export async function cancelQuietly(exchange: DeriveClient, subId: number, o: Order): Promise<void> {
  try {
    await exchange.cancel({ subaccount_id: subId, instrument_name: o.instrument_name, order_id: o.order_id })
  } catch (e) {
    // filled or expired meanwhile: nothing rests any more, which is what we wanted
    if ((e as { code?: string }).code !== 'EXCHANGE_ORDER_REJECTED') throw e
  }
}

/**
 * The most fee we accept per contract: the taker fee's base plus 0.1 % of the index, in USD, and never
 * below the floor Derive requires of a signed max fee, 2 × the taker rate × max(index, limit) + the base
 * fee (orderMaxFeeFloorE18; an order under it is refused, 11023).
 */
export function maxFee(t: Pick<Instrument, 'taker_fee_rate' | 'base_fee'> & { index_price: string }, limitE18: bigint) {
  const ours = E18 + (toE18(t.index_price) * 10n) / BPS
  const rates = { takerRateE18: toE18(t.taker_fee_rate), baseFeeE18: toE18(t.base_fee) }
  return fromE18(maxBigint(ours, ceilToE12(orderMaxFeeFloorE18(rates, toE18(t.index_price), limitE18))))
}

/** A position's reason: what it waits for (the step is not a failure). */
export async function wait(sql: Queryable, id: string, reason: string): Promise<string> {
  await setPositionReason(sql, id, reason)
  return 'waiting'
}

/** The run's view of the market: instruments and tickers read once per run. */
export class MarketCache {
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

/** One expiry's options of a side with a price: their quotes, and the index their tickers carry. */
export async function optionQuotes(
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
    const q = optionQuoteOf(i, t, expiry, type)
    if (q) quotes.push(q)
  }
  return { quotes, indexE18 }
}
