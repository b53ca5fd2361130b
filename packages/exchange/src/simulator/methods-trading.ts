/** Orders: place (signed), debug, cancel, open orders. */
import type { Address, Hex } from 'viem'
import { actionDebug } from '../protocol/action'
import { toE18 } from '../protocol/decimal'
import { encodeTradeData } from '../protocol/module-data'
import { RPC } from '../protocol/rpc-codes'
import { CancelParams, OrderParams } from '../protocol/schemas'
import { type Ctx, check, type Handler, ownSubaccount, requireWallet } from './handler'
import { actionOf } from './methods-account'
import { rpcErr, SimRpcError } from './rpc-error'
import { cancelOrder, placeOrder } from './trading'
import { verifyAction } from './verify'
import { orderView, tradeView } from './views'

function decimalE18(s: string, what: string): bigint {
  try {
    return toE18(s)
  } catch {
    throw new SimRpcError(RPC.INVALID_PARAMS, 'Invalid params', `${what} has more than 18 decimals`)
  }
}

/** Rebuilds the trade action exactly as the signer should have built it. */
function tradeAction(ctx: Ctx, p: OrderParams) {
  const inst = ctx.engine.catalog.get(p.instrument_name)
  if (!inst) throw rpcErr.instrument(p.instrument_name)
  const data = encodeTradeData({
    asset: inst.assetAddress,
    subId: inst.subId,
    limitPriceE18: decimalE18(p.limit_price, 'limit_price'),
    amountE18: decimalE18(p.amount, 'amount'),
    maxFeeE18: decimalE18(p.max_fee, 'max_fee'),
    recipientId: BigInt(p.subaccount_id),
    isBid: p.direction === 'buy',
  })
  return { inst, action: actionOf(ctx, p.subaccount_id, ctx.engine.contracts.tradeModule, data, p) }
}

export const tradingMethods: Record<string, Handler> = {
  'private/order': async (ctx, raw) => {
    const w = requireWallet(ctx)
    const p = check<OrderParams>(OrderParams, raw)
    const sub = ownSubaccount(ctx, p.subaccount_id)
    const { inst, action } = tradeAction(ctx, p)
    await verifyAction(ctx.engine, w, sub, action, p.signature)
    const { order, trades } = placeOrder(ctx.engine, sub, inst, {
      direction: p.direction,
      amountE18: toE18(p.amount),
      limitPriceE18: toE18(p.limit_price),
      maxFeeE18: toE18(p.max_fee),
      timeInForce: p.time_in_force ?? 'gtc',
      label: p.label ?? '',
      mmp: p.mmp ?? false,
      nonce: String(p.nonce),
      signer: p.signer as Address,
      signature: p.signature as Hex,
      expirySec: p.signature_expiry_sec,
    })
    return { order: orderView(order), trades: trades.map(tradeView) }
  },

  'private/order_debug': (ctx, raw) => {
    const w = requireWallet(ctx)
    const p = check<OrderParams>(OrderParams, raw)
    ownSubaccount(ctx, p.subaccount_id)
    const { action } = tradeAction(ctx, p)
    const debug = actionDebug({ ...action, owner: w.wallet }, ctx.engine.chainId, ctx.engine.contracts.matching)
    return {
      ...debug,
      raw_data: {
        subaccount_id: p.subaccount_id,
        nonce: String(p.nonce),
        module: ctx.engine.contracts.tradeModule,
        expiry: p.signature_expiry_sec,
        owner: w.wallet,
        signer: p.signer,
      },
    }
  },

  'private/cancel': (ctx, raw) => {
    const p = check<CancelParams>(CancelParams, raw)
    ownSubaccount(ctx, p.subaccount_id)
    return orderView(cancelOrder(ctx.engine, p.subaccount_id, p.order_id))
  },

  'private/cancel_all': (ctx, p) => {
    const sub = ownSubaccount(ctx, p.subaccount_id)
    for (const o of ctx.engine.orders.values())
      if (o.subaccountId === sub.id && o.status === 'open') cancelOrder(ctx.engine, sub.id, o.orderId)
    return 'ok'
  },

  'private/get_open_orders': (ctx, p) => {
    const sub = ownSubaccount(ctx, p.subaccount_id)
    const orders = [...ctx.engine.orders.values()].filter((o) => o.subaccountId === sub.id && o.status === 'open')
    return { subaccount_id: sub.id, orders: orders.map(orderView) }
  },

  'private/get_order': (ctx, p) => {
    const sub = ownSubaccount(ctx, p.subaccount_id)
    const o = ctx.engine.orders.get(String(p.order_id))
    if (!o || o.subaccountId !== sub.id)
      throw new SimRpcError(RPC.ORDER_DOES_NOT_EXIST, 'Does not exist', String(p.order_id))
    return orderView(o)
  },
}
