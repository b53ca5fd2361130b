/**
 * What Derive's own TypeScript SDK (derive-ts 3.0.13) calls besides the service's methods: every
 * currency (its transfer and withdrawal helpers resolve the asset through `public/get_all_currencies`),
 * the tickers of a market, the names of the live instruments, the order history. In the spec's
 * shapes, checked by tools/derive-simulator/test/v3-conformance.test.ts.
 */
import type { V3Wire as W } from '@wh/exchange'
import { COLLATERALS } from '../assets'
import type { SimEngine } from '../engine'
import { type Ctx, check, type Handler, ownSubaccount, requireWallet } from '../handler'
import { rpcErr } from '../rpc-error'
import type { SimInstrument, SimOrder } from '../sim-types'
import { V3OrderHistoryParams, V3TickersParams } from './params'
import { currencyV3, orderV3, tickerSlim } from './views'
import { page } from './views-history'

function isLive(engine: SimEngine, i: SimInstrument): boolean {
  return i.type !== 'erc20' && (i.option === null || i.option.expirySec * 1000 > engine.now())
}

/** YYYYMMDD of an option's expiry, as `public/get_tickers` takes it. */
function expiryDateOf(i: SimInstrument): number | undefined {
  if (!i.option) return undefined
  const d = new Date(i.option.expirySec * 1000)
  return d.getUTCFullYear() * 10_000 + (d.getUTCMonth() + 1) * 100 + d.getUTCDate()
}

const tickers: Handler = ({ engine }, raw): W.GetTickersResponse => {
  const p = check<V3TickersParams>(V3TickersParams, raw)
  const expiry = p.expiry_date == null ? undefined : Number(p.expiry_date)
  // options need both a currency and an expiry date; perps and spot take no expiry (spec public/get_tickers)
  if (p.instrument_type === 'option' && (p.currency == null || expiry === undefined))
    throw rpcErr.params('options need currency and expiry_date')
  if (p.instrument_type !== 'option' && expiry !== undefined) throw rpcErr.params('expiry_date is for options only')
  const out: Record<string, W.TickerSlimSnapshot> = {}
  for (const i of engine.catalog.byName.values())
    if (
      i.type === p.instrument_type &&
      isLive(engine, i) &&
      (p.currency == null || i.currency === p.currency) &&
      (expiry === undefined || expiryDateOf(i) === expiry)
    )
      out[i.name] = tickerSlim(engine, i)
  return { tickers: out }
}

/** Orders that ended (filled, cancelled, expired), one subaccount's or the wallet's, oldest first. */
const orderHistory: Handler = (ctx: Ctx, raw): W.PaginatedOrdersResult => {
  const w = requireWallet(ctx)
  const p = check<V3OrderHistoryParams>(V3OrderHistoryParams, raw)
  if ((p.subaccount_id == null) === (p.wallet == null))
    throw rpcErr.params('give exactly one of subaccount_id and wallet')
  const subs =
    p.subaccount_id != null
      ? [ownSubaccount(ctx, p.subaccount_id).id]
      : [...ctx.engine.subaccounts.values()].filter((s) => s.wallet === w.wallet).map((s) => s.id)
  const from = p.from_timestamp ?? 0
  const to = p.to_timestamp ?? Number.MAX_SAFE_INTEGER
  const ended = [...ctx.engine.orders.values()].filter(
    (o: SimOrder) => subs.includes(o.subaccountId) && o.status !== 'open' && o.updatedMs >= from && o.updatedMs <= to,
  )
  const { items, pagination } = page(ended, p)
  return { subaccount_id: p.subaccount_id ?? 0, orders: items.map(orderV3), pagination }
}

export const sdkV3: Record<string, Handler> = {
  'public/get_all_currencies': ({ engine }): W.Currency[] =>
    Object.keys(COLLATERALS).flatMap((name) => currencyV3(engine, name) ?? []),
  'public/get_tickers': tickers,
  'public/get_all_live_instruments': ({ engine }): string[] =>
    [...engine.catalog.byName.values()]
      .filter((i) => isLive(engine, i))
      .map((i) => i.name)
      .sort(),
  'private/get_order_history': orderHistory,
}
