/**
 * Where a buy-back quote's price comes from (docs/trading.md "Buying a leg back"): the exchange's
 * public ticker of the leg's instrument (@wh/exchange `publicReader`, Derive v3), read over HTTP without keys, as the health route's
 * `get_time` probe does. The API holds no DeriveClient (it never signs), and the price feed in Redis
 * (@wh/market) follows only the perps and the at-the-money options of two expiries, not the
 * instrument a leg was sold on. One attempt, a short deadline: on any trouble closePosition
 * answers 503 QUOTE_UNAVAILABLE, never a 500.
 */
import { HttpTransport, publicReader, toE18 } from '@wh/exchange'
import type { PriceReader } from '@wh/trading'
import type { PublicExchange } from '../quotes/chain'

/** A quote read's deadline: the user waits on it. */
export const QUOTE_TIMEOUT_MS = 2_000

/** The ticker's best ask, mark and tick in e18 (0 for an absent or empty price). */
export function exchangeTickerPrices(exchange: PublicExchange, timeoutMs = QUOTE_TIMEOUT_MS): PriceReader {
  const transport = new HttpTransport({
    baseUrl: exchange.httpUrl,
    timeoutMs,
    retry: { attempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
  })
  const reader = publicReader(transport)
  const price = (v: string | null | undefined) => {
    if (!v) return 0n
    const e18 = toE18(v)
    return e18 > 0n ? e18 : 0n
  }
  return async (instrument) => {
    const t = await reader.getTicker(instrument)
    return { askE18: price(t.best_ask_price), markE18: price(t.mark_price), tickE18: price(t.tick_size) }
  }
}
