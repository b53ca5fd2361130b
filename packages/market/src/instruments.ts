/**
 * Which instruments the price feed follows per underlying: the perp (its ticker carries the index)
 * and the at-the-money call and put of the nearest expiries. Pure: the feed passes the exchange's
 * instrument list and the index; strikes compare as bigint e18.
 */
import type { Instrument, Ticker } from '@wh/exchange'
import { toE18 } from '@wh/exchange'
import type { PriceInstrument } from './messages'

/** An expiry closer than this is skipped (its options are about to settle). */
export const MIN_TIME_TO_EXPIRY_MS = 60 * 60_000
/** Expiries followed per underlying (the nearest ones). */
export const FOLLOWED_EXPIRIES = 2

/**
 * The ATM call and put of each of the `expiries` nearest expiries at least `minTimeToExpiryMs`
 * ahead of `nowMs`: per expiry the strike nearest `indexE18` (the lower on a tie).
 */
export function selectAtmOptions(
  instruments: readonly Pick<Instrument, 'instrument_name' | 'option_details' | 'is_active'>[],
  indexE18: bigint,
  nowMs: number,
  opts: { expiries?: number; minTimeToExpiryMs?: number } = {},
): string[] {
  const minAhead = opts.minTimeToExpiryMs ?? MIN_TIME_TO_EXPIRY_MS
  const byExpiry = new Map<number, { name: string; strikeE18: bigint; type: 'C' | 'P' }[]>()
  for (const i of instruments) {
    const o = i.option_details
    if (!o || !i.is_active || o.expiry * 1000 - nowMs < minAhead) continue
    const list = byExpiry.get(o.expiry) ?? []
    list.push({ name: i.instrument_name, strikeE18: toE18(o.strike), type: o.option_type })
    byExpiry.set(o.expiry, list)
  }
  const expiries = [...byExpiry.keys()].sort((a, b) => a - b).slice(0, opts.expiries ?? FOLLOWED_EXPIRIES)
  const out: string[] = []
  for (const e of expiries) {
    const list = byExpiry.get(e) ?? []
    let best: bigint | undefined
    let bestDistance: bigint | undefined
    for (const o of list) {
      const d = o.strikeE18 > indexE18 ? o.strikeE18 - indexE18 : indexE18 - o.strikeE18
      if (
        bestDistance === undefined ||
        d < bestDistance ||
        (d === bestDistance && best !== undefined && o.strikeE18 < best)
      ) {
        best = o.strikeE18
        bestDistance = d
      }
    }
    for (const type of ['C', 'P'] as const) {
      const hit = list.find((o) => o.strikeE18 === best && o.type === type)
      if (hit) out.push(hit.name)
    }
  }
  return out
}

/** The exchange's ticker as the feed publishes an instrument (decimal strings kept as they came). */
export function priceInstrumentOf(t: Ticker): PriceInstrument {
  const o = t.option_details
  return {
    name: t.instrument_name,
    kind: o ? 'option' : 'perp',
    strike: o ? o.strike : null,
    expiry: o ? new Date(o.expiry * 1000).toISOString() : null,
    optionType: o ? o.option_type : null,
    bid: t.best_bid_price,
    ask: t.best_ask_price,
    mark: t.mark_price,
    iv: t.option_pricing?.iv ?? null,
    delta: t.option_pricing?.delta ?? null,
  }
}
