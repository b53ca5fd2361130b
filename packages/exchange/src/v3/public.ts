/**
 * The exchange's public market reads without keys, in the service's shapes (docs/exchange.md
 * "Public reads"): what the API reads (option chains, a leg's ticker, the clock probe) and what
 * the client's own public reads are made of. Instruments come in pages
 * (`public/get_all_instruments`), and slim tickers are spread over their instrument (./adapt.ts).
 */
import type { HttpTransport } from '../client/http-transport'
import type * as T from '../protocol/types'
import * as A from './adapt'
import type * as W from './wire.gen'

/** Page size for `public/get_all_instruments` (the spec's maximum). */
export const INSTRUMENT_PAGE = 1000

export interface PublicReader {
  getTime(): Promise<number>
  getInstruments(p: { currency: string; instrument_type: T.InstrumentType; expired?: boolean }): Promise<T.Instrument[]>
  getInstrument(instrument_name: string): Promise<T.Instrument>
  getTicker(instrument_name: string): Promise<T.Ticker>
}

/** One public method: `name` without the `public/` scope. */
export type PublicCall = <R>(name: string, params: object) => Promise<R>

/** Every page of v3's `public/get_all_instruments`, as instruments in the service's shape. */
export async function v3Instruments(
  call: PublicCall,
  p: { currency: string; instrument_type: T.InstrumentType; expired?: boolean },
): Promise<T.Instrument[]> {
  const out: T.Instrument[] = []
  for (let page = 1; ; page++) {
    const r = await call<W.V3Wire['public/get_all_instruments']['result']>('get_all_instruments', {
      currency: p.currency,
      instrument_type: p.instrument_type,
      expired: p.expired ?? false,
      page,
      page_size: INSTRUMENT_PAGE,
    })
    out.push(...r.instruments.map(A.instrumentFromV3))
    if (page >= r.pagination.num_pages) return out
  }
}

/** v3's `public/get_instrument` in the service's shape. */
export async function v3Instrument(call: PublicCall, instrument_name: string): Promise<T.Instrument> {
  return A.instrumentFromV3(
    await call<W.V3Wire['public/get_instrument']['result']>('get_instrument', { instrument_name }),
  )
}

/** v3's slim ticker spread over its instrument. */
export async function v3Ticker(call: PublicCall, inst: T.Instrument): Promise<T.Ticker> {
  const t = await call<W.V3Wire['public/get_ticker']['result']>('get_ticker', { instrument_name: inst.instrument_name })
  return A.tickerFromV3(inst, t)
}

/**
 * The public reads of the exchange behind `transport` (its base is …/v3).
 * Instruments read one by one are kept (what a ticker is spread over never changes); at most
 * `maxInstruments` of them, the oldest dropped first.
 */
export function publicReader(transport: HttpTransport, o: { maxInstruments?: number } = {}): PublicReader {
  const call: PublicCall = (name, params) => transport.call(`public/${name}`, params, { idempotent: true })
  const kept = new Map<string, Promise<T.Instrument>>()
  const max = o.maxInstruments ?? 10_000
  const instrument = (name: string): Promise<T.Instrument> => {
    const hit = kept.get(name)
    if (hit) return hit
    const read = v3Instrument(call, name)
    read.catch(() => kept.delete(name))
    kept.set(name, read)
    if (kept.size > max) kept.delete(kept.keys().next().value as string)
    return read
  }
  return {
    getTime: () => call<number>('get_time', {}),
    getInstruments: (p) => v3Instruments(call, p),
    getInstrument: instrument,
    getTicker: async (name) => v3Ticker(call, await instrument(name)),
  }
}
