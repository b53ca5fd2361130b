/**
 * The option instruments in use: those of live positions (requested … closing with an instrument
 * chosen). The price feed follows their tickers beside the at-the-money ones, so /ws/prices carries
 * bid, ask, mark, IV and delta of every option a user holds or is selling (docs/market-data.md
 * "The feed").
 */
import type { Sql } from '@wh/db'
import { parseInstrumentName } from '@wh/exchange'
import type { MarketAsset } from './assets'

/**
 * Most in-use instruments followed per underlying, the most used first. A bound on the upstream
 * subscriptions and on every /ws/prices update (each instrument adds ~250 bytes to each message
 * sent to each client); the profiles' target delta and tenor window keep the real set far smaller.
 */
export const MAX_IN_USE_PER_ASSET = 24

/**
 * Per underlying (keyed by symbol, `positions.asset`), the option instruments of its live positions
 * (states requested, funding, placing, open, closing) that expire after `nowMs`, sorted by name: at
 * most `limit` each, those with the most live positions kept. One grouped read over the live
 * positions; the state list is written out so the partial index `positions_live_idx` applies.
 */
export async function readInstrumentsInUse(
  sql: Sql,
  assets: readonly Pick<MarketAsset, 'symbol' | 'exchangeCurrency'>[],
  nowMs: number,
  limit = MAX_IN_USE_PER_ASSET,
): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>(assets.map((a) => [a.symbol, []]))
  if (assets.length === 0) return out
  const currencyOf = new Map(assets.map((a) => [a.symbol as string, a.exchangeCurrency]))
  const rows = await sql<{ asset: string; instrument: string }[]>`
    select asset, instrument from (
      select asset, instrument,
        row_number() over (partition by asset order by count(*) desc, instrument) as rank
      from positions
      where state in ('requested', 'funding', 'placing', 'open', 'closing') and instrument is not null
        and asset = any(${assets.map((a) => a.symbol)}::text[])
        and (expiry_sec is null or expiry_sec > ${Math.floor(nowMs / 1000)})
      group by asset, instrument
    ) t
    where rank <= ${limit}
    order by asset, instrument`
  for (const r of rows) {
    const parsed = parseInstrumentName(r.instrument)
    // only unexpired options of that underlying: the feed subscribes the name, so it must be one
    const currency = currencyOf.get(r.asset)
    if (parsed?.kind !== 'option' || parsed.currency !== currency || parsed.expirySec * 1000 <= nowMs) continue
    out.get(r.asset)?.push(r.instrument)
  }
  return out
}
