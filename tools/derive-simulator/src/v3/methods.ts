/**
 * The v3 methods the simulator serves (@wh/exchange V3_METHODS) on its engine: orders
 * go through its matching (../trading.ts), transfers and withdrawals through its collateral
 * moves (./methods-funds.ts, ../accounts.ts), histories read its records
 * (./methods-history.ts); requests and answers take v3's shapes.
 */

import type { V3Wire as W } from '@wh/exchange'
import { encodeTradeDataV3, fromE18, orderMaxFeeFloorE18, orderScopeOf, RPC, V3_MODULES } from '@wh/exchange'
import type { Address, Hex } from 'viem'
import { type Ctx, check, type Handler, ownSubaccount, requireSigner, requireWallet } from '../handler'
import { rpcErr, SimRpcError } from '../rpc-error'
import { requireScope, requireTrade } from '../session-keys'
import type { SimInstrument } from '../sim-types'
import { cancelOrder, placeOrder } from '../trading'
import { e18, encoded, fundsV3 } from './methods-funds'
import { historyV3 } from './methods-history'
import { keysV3 } from './methods-keys'
import { sdkV3 } from './methods-sdk'
import {
  V3AllInstrumentsParams,
  V3CancelParams,
  V3InstrumentParams,
  V3OrderParams,
  V3SubaccountParams,
  V3TradeHistoryParams,
  V3WalletParams,
} from './params'
import { verifyV3Action } from './verify'
import {
  collateralsV3,
  currencyV3,
  instrumentV3,
  orderV3,
  positionsV3,
  subaccountV3,
  tickerSlim,
  tradeV3,
} from './views'
import { page } from './views-history'

function instrumentOf({ engine }: Ctx, raw: Record<string, unknown>): SimInstrument {
  const p = check<{ instrument_name: string }>(V3InstrumentParams, raw)
  const i = engine.catalog.get(p.instrument_name)
  if (!i) throw rpcErr.instrument(p.instrument_name)
  return i
}

/**
 * Derive refuses an order whose signed max fee is below 2 × the taker rate × max(index, limit) +
 * the base fee (derive-ts `src/api/orders.ts`), with 11023 (docs.derive.xyz `reference/error-codes`).
 */
function requireMaxFeeFloor(ctx: Ctx, inst: SimInstrument, limitPriceE18: bigint, maxFeeE18: bigint): void {
  const rates = { takerRateE18: inst.takerFeeRateE18, baseFeeE18: inst.baseFeeE18 }
  const floor = orderMaxFeeFloorE18(rates, ctx.engine.market.indexE18(inst.currency), limitPriceE18)
  if (maxFeeE18 < floor)
    throw new SimRpcError(
      RPC.MAX_FEE_TOO_LOW,
      'Max fee order param is too low',
      `signed max_fee must be >= ${fromE18(floor)}`,
    )
}

const publicV3: Record<string, Handler> = {
  'public/get_time': ({ engine }) => engine.now(),

  'public/get_all_instruments': ({ engine }, raw): W.GetAllInstrumentsResponse => {
    const p = check<V3AllInstrumentsParams>(V3AllInstrumentsParams, raw)
    const now = engine.now()
    const all = [...engine.catalog.byName.values()]
      .filter((i) => (p.currency == null || i.currency === p.currency) && i.type === p.instrument_type)
      .filter((i) => p.expired === (i.option !== null && i.option.expirySec * 1000 <= now))
    const { items, pagination } = page(all, p)
    return { instruments: items.map((i) => instrumentV3(engine, i)), pagination }
  },

  'public/get_instrument': (ctx, raw) => instrumentV3(ctx.engine, instrumentOf(ctx, raw)),

  'public/get_ticker': (ctx, raw) => tickerSlim(ctx.engine, instrumentOf(ctx, raw)),

  'public/get_currency': ({ engine }, raw) => {
    const c = currencyV3(engine, String(raw.currency))
    if (!c) throw rpcErr.currency(String(raw.currency))
    return c
  },
}

const accountV3: Record<string, Handler> = {
  'private/get_subaccounts': (ctx, raw): W.PrivateGetSubaccountsResponse => {
    const w = requireWallet(ctx)
    check(V3WalletParams, raw)
    const ids = [...ctx.engine.subaccounts.values()].filter((s) => s.wallet === w.wallet).map((s) => s.id)
    return { wallet: w.owner, subaccount_ids: ids }
  },

  'private/get_subaccount': (ctx, raw) =>
    subaccountV3(
      ctx.engine,
      ownSubaccount(ctx, check<{ subaccount_id: number }>(V3SubaccountParams, raw).subaccount_id),
    ),

  'private/get_all_portfolios': (ctx, raw) => {
    const w = requireWallet(ctx)
    check(V3WalletParams, raw)
    return [...ctx.engine.subaccounts.values()]
      .filter((s) => s.wallet === w.wallet)
      .map((s) => subaccountV3(ctx.engine, s))
  },

  'private/get_collaterals': (ctx, raw): W.PrivateGetCollateralsResponse => {
    const sub = ownSubaccount(ctx, check<{ subaccount_id: number }>(V3SubaccountParams, raw).subaccount_id)
    return { subaccount_id: sub.id, collaterals: collateralsV3(ctx.engine, sub) }
  },

  'private/get_positions': (ctx, raw): W.PrivateGetPositionsResponse => {
    const sub = ownSubaccount(ctx, check<{ subaccount_id: number }>(V3SubaccountParams, raw).subaccount_id)
    return { subaccount_id: sub.id, positions: positionsV3(ctx.engine, sub) }
  },
}

const tradingV3: Record<string, Handler> = {
  'private/order': async (ctx, raw): Promise<W.OrderCreatedResponse> => {
    const w = requireWallet(ctx)
    const p = check<V3OrderParams>(V3OrderParams, raw)
    const sub = ownSubaccount(ctx, p.subaccount_id)
    const inst = ctx.engine.catalog.get(p.instrument_name)
    if (!inst) throw rpcErr.instrument(p.instrument_name)
    const t = { amountE18: e18(p.amount, 'amount'), limitPriceE18: e18(p.limit_price, 'limit_price') }
    const maxFeeE18 = e18(p.max_fee, 'max_fee')
    const data = encoded(() =>
      encodeTradeDataV3({
        asset: inst.assetAddress,
        subId: inst.subId,
        ...t,
        maxFeeE18,
        recipientId: BigInt(sub.id),
        isBid: p.direction === 'buy',
      }),
    )
    const nonce = BigInt(p.nonce)
    const expirySec = BigInt(p.signature_expiry_sec)
    const signature = p.signature.startsWith('0x') ? p.signature : `0x${p.signature}`
    const a = { subaccountId: BigInt(sub.id), nonce, module: V3_MODULES.trade, data, expirySec }
    await verifyV3Action(ctx.engine, w, sub, { ...a, kind: 'order', signer: p.signer, signature }, (s) =>
      requireScope(s, orderScopeOf(inst.type), sub.id),
    )
    requireMaxFeeFloor(ctx, inst, t.limitPriceE18, maxFeeE18)
    const { order, trades } = placeOrder(ctx.engine, sub, inst, {
      direction: p.direction,
      ...t,
      maxFeeE18,
      timeInForce: p.time_in_force ?? 'gtc',
      label: p.label ?? '',
      mmp: p.mmp ?? false,
      nonce: nonce.toString(),
      signer: p.signer as Address,
      signature: signature as Hex,
      expirySec: Number(expirySec),
    })
    return { order: orderV3(order), trades: trades.map(tradeV3) }
  },

  'private/cancel': (ctx, raw) => {
    const p = check<V3CancelParams>(V3CancelParams, raw)
    requireTrade(requireSigner(ctx), ownSubaccount(ctx, p.subaccount_id).id)
    return orderV3(cancelOrder(ctx.engine, p.subaccount_id, p.order_id))
  },

  'private/cancel_all': (ctx, raw): W.CancelAllResponse => {
    const sub = ownSubaccount(ctx, check<{ subaccount_id: number }>(V3SubaccountParams, raw).subaccount_id)
    requireTrade(requireSigner(ctx), sub.id)
    for (const o of ctx.engine.orders.values())
      if (o.subaccountId === sub.id && o.status === 'open') cancelOrder(ctx.engine, sub.id, o.orderId)
    return 'ok'
  },

  'private/get_open_orders': (ctx, raw): W.AggregatedOrdersResult => {
    const sub = ownSubaccount(ctx, check<{ subaccount_id: number }>(V3SubaccountParams, raw).subaccount_id)
    const orders = [...ctx.engine.orders.values()].filter((o) => o.subaccountId === sub.id && o.status === 'open')
    return { subaccount_id: sub.id, orders: orders.map(orderV3) }
  },

  'private/get_order': (ctx, raw) => {
    const sub = ownSubaccount(ctx, check<{ subaccount_id: number }>(V3SubaccountParams, raw).subaccount_id)
    const o = ctx.engine.orders.get(String(raw.order_id))
    if (!o || o.subaccountId !== sub.id)
      throw new SimRpcError(RPC.ORDER_DOES_NOT_EXIST, 'Does not exist', String(raw.order_id))
    return orderV3(o)
  },

  'private/get_trade_history': (ctx, raw): W.PaginatedTradesResult => {
    const w = requireWallet(ctx)
    const p = check<V3TradeHistoryParams>(V3TradeHistoryParams, raw)
    if (p.subaccount_id == null && p.wallet == null) throw rpcErr.params('subaccount_id or wallet is required')
    const subs =
      p.subaccount_id != null
        ? [ownSubaccount(ctx, p.subaccount_id).id]
        : [...ctx.engine.subaccounts.values()].filter((s) => s.wallet === w.wallet).map((s) => s.id)
    const from = p.from_timestamp ?? 0
    const to = p.to_timestamp ?? Number.MAX_SAFE_INTEGER
    const trades = ctx.engine.history.trades.filter(
      (t) =>
        subs.includes(t.subaccountId) &&
        t.timestampMs >= from &&
        t.timestampMs <= to &&
        (p.instrument_name == null || t.instrument === p.instrument_name) &&
        (p.order_id == null || t.orderId === p.order_id),
    )
    const { items, pagination } = page(trades, p)
    return { subaccount_id: p.subaccount_id ?? 0, trades: items.map(tradeV3), pagination }
  },
}

export const V3_SIM_METHODS: Record<string, Handler> = {
  ...publicV3,
  ...accountV3,
  ...tradingV3,
  ...fundsV3,
  ...historyV3,
  ...keysV3,
  ...sdkV3,
}
