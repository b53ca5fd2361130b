/**
 * The option chain a quote is made from (docs/trading.md "Economics"): the exchange's PUBLIC
 * instruments and tickers (@wh/exchange `publicReader`, Derive v3), read over HTTP without keys as the buy-back quote does
 * (apps/api/src/routes/positions/prices.ts): the API holds no DeriveClient and never signs. Only
 * the expiry the placing tick would pick is read, one ticker per strike of the side, at most
 * TICKER_CONCURRENCY at once. Answers are reused for CHAIN_CACHE_MS (instruments for
 * INSTRUMENTS_CACHE_MS) so quotes, POST /positions and GET /trading-config do not each read the
 * whole chain; a failed read is remembered for FAILURE_CACHE_MS, so an unreachable exchange is not
 * hammered and a passing hiccup is forgotten soon.
 */
import { mapLimit } from '@wh/core'
import { DERIVE_FEE_SCHEDULE, HttpTransport, type Instrument, publicReader, type Ticker, toE18 } from '@wh/exchange'
import { type ChainOption, chooseExpiry, type OptionFeeSchedule, optionQuoteOf, type TradingProfile } from '@wh/trading'

export const CHAIN_TIMEOUT_MS = 2_000
export const CHAIN_CACHE_MS = 5_000
export const INSTRUMENTS_CACHE_MS = 60_000
const TICKER_CONCURRENCY = 8

/**
 * The options of the expiry the placing tick would pick now for `side` (empty: no expiry in the
 * window), under `rule`'s tenor window when given (a wheel's settings), else the profile's.
 */
export type OptionChainReader = (
  asset: string,
  side: 'put' | 'call',
  nowMs: number,
  rule?: TradingProfile,
) => Promise<ChainOption[]>

/** The instrument's published fees (Derive lists them per instrument), else Derive's schedule. */
function feesOf(i: Instrument): OptionFeeSchedule {
  const d = DERIVE_FEE_SCHEDULE.option
  const v = (s: string | null | undefined, fallback: bigint | null) => (s ? toE18(s) : fallback)
  return {
    makerRate: v(i.maker_fee_rate, d.makerRate) ?? d.makerRate,
    takerRate: v(i.taker_fee_rate, d.takerRate) ?? d.takerRate,
    baseFee: v(i.base_fee, d.baseFee) ?? d.baseFee,
    capRate: i.mark_price_fee_rate_cap === undefined ? d.capRate : v(i.mark_price_fee_rate_cap, null),
  }
}

interface Cached<T> {
  at: number
  value: Promise<T>
  failed: boolean
}

/** A failed read is remembered this long (a second): an unreachable exchange is not asked again at once */
export const FAILURE_CACHE_MS = 1_000

/** Reuses a promise for `ttlMs` of the process's clock (a rejected one for FAILURE_CACHE_MS). */
function cached<T>(map: Map<string, Cached<T>>, key: string, ttlMs: number, nowMs: number, load: () => Promise<T>) {
  const hit = map.get(key)
  const ttl = hit?.failed ? Math.min(ttlMs, FAILURE_CACHE_MS) : ttlMs
  if (hit && nowMs - hit.at < ttl && nowMs >= hit.at) return hit.value
  const entry: Cached<T> = { at: nowMs, value: load(), failed: false }
  entry.value.catch(() => {
    entry.failed = true // a remembered failure is not an unhandled rejection
  })
  map.set(key, entry)
  if (map.size > 10_000) map.delete(map.keys().next().value as string)
  return entry.value
}

/** Where the API reads the exchange's public data: EXCHANGE_HTTP_URL (Derive v3, the only protocol). */
export interface PublicExchange {
  readonly httpUrl: string
}

/** The exchange's option chain, as the placing tick would read it for `profile`. */
export function exchangeOptionChain(
  exchange: PublicExchange,
  profile: TradingProfile,
  o: { timeoutMs?: number; cacheMs?: number; wallClock?: () => number } = {},
): OptionChainReader {
  const transport = new HttpTransport({
    baseUrl: exchange.httpUrl,
    timeoutMs: o.timeoutMs ?? CHAIN_TIMEOUT_MS,
    retry: { attempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
  })
  const cacheMs = o.cacheMs ?? CHAIN_CACHE_MS
  // the caches age on the process's own time: the API's clock may be a test's, standing still
  const wall = o.wallClock ?? Date.now
  const instruments = new Map<string, Cached<Instrument[]>>()
  const tickers = new Map<string, Cached<Ticker>>()
  const reader = publicReader(transport)
  return async (asset, side, nowMs, rule) => {
    const all = await cached(instruments, asset, Math.min(cacheMs * 12, INSTRUMENTS_CACHE_MS), wall(), () =>
      reader.getInstruments({ currency: asset, instrument_type: 'option' }),
    )
    const expiry = chooseExpiry(
      all.map((i) => i.option_details?.expiry ?? 0),
      nowMs,
      rule ?? profile,
    )
    if (expiry === undefined) return []
    const type = side === 'put' ? 'P' : 'C'
    const candidates = all.filter((i) => i.option_details?.expiry === expiry && i.option_details.option_type === type)
    const read = await mapLimit(candidates, TICKER_CONCURRENCY, (i) =>
      cached(tickers, i.instrument_name, cacheMs, wall(), () => reader.getTicker(i.instrument_name)),
    )
    return candidates.flatMap((i, k): ChainOption[] => {
      const t = read[k]
      const quote = t?.mark_price ? optionQuoteOf(i, t, expiry, type) : undefined
      if (!t || !quote) return []
      return [
        {
          quote,
          amountStepE18: toE18(i.amount_step),
          minimumAmountE18: toE18(i.minimum_amount),
          indexE18: toE18(t.index_price),
          fees: feesOf(i),
        },
      ]
    })
  }
}
