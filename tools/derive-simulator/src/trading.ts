/**
 * Orders against the simulated market maker. A limit order that crosses the maker's quote fills
 * at once (taker) up to the maker's depth; the rest rests (gtc), is cancelled (ioc), or fails
 * the whole order (fok). A post-only order that would cross is refused. Resting orders fill as
 * maker, at their limit price, once the maker's quote moves through them.
 */
import { randomUUID } from 'node:crypto'
import { absBig, minBig, mulE18, RPC } from '@wh/exchange'
import { tradeFeeE18 } from './fees'
import { marginOk } from './margin'
import { rpcErr, SimRpcError } from './rpc-error'
import type { SimState } from './sim-state'
import type { SimInstrument, SimOrder, SimSubaccount, SimTrade } from './sim-types'

export interface NewOrder {
  direction: 'buy' | 'sell'
  amountE18: bigint
  limitPriceE18: bigint
  maxFeeE18: bigint
  timeInForce: SimOrder['timeInForce']
  label: string
  mmp: boolean
  nonce: string
  signer: SimOrder['signer']
  signature: SimOrder['signature']
  expirySec: number
}

export function validateOrder(inst: SimInstrument, o: NewOrder, nowMs: number): void {
  if (inst.type === 'erc20') throw new SimRpcError(RPC.INSTRUMENT_NOT_LIVE, 'Instrument is not live', inst.name)
  if (inst.option && inst.option.expirySec * 1000 <= nowMs)
    throw new SimRpcError(RPC.INSTRUMENT_NOT_LIVE, 'Instrument is not live', inst.name)
  if (o.amountE18 < inst.minAmountE18 || o.amountE18 > inst.maxAmountE18 || o.amountE18 % inst.amountStepE18 !== 0n)
    throw new SimRpcError(
      RPC.INVALID_AMOUNT,
      'Invalid amount',
      'amount must be a multiple of amount_step within limits',
    )
  if (o.limitPriceE18 <= 0n || o.limitPriceE18 % inst.tickE18 !== 0n)
    throw new SimRpcError(
      RPC.INVALID_LIMIT_PRICE,
      'Invalid limit price',
      'limit_price must be a positive multiple of tick_size',
    )
}

/** Places an order; returns it with the fills it made at once. */
export function placeOrder(engine: SimState, sub: SimSubaccount, inst: SimInstrument, o: NewOrder) {
  const now = engine.now()
  validateOrder(inst, o, now)
  const q = engine.market.quote(inst, now)
  const isBuy = o.direction === 'buy'
  const crosses = isBuy ? o.limitPriceE18 >= q.askE18 : q.bidE18 > 0n && o.limitPriceE18 <= q.bidE18
  if (crosses && o.timeInForce === 'post_only')
    throw new SimRpcError(RPC.POST_ONLY_REJECT, 'Post-only reject', 'order would cross the book')
  const fillable = crosses ? minBig(o.amountE18, q.depthE18) : 0n
  if (o.timeInForce === 'fok' && fillable < o.amountE18)
    throw new SimRpcError(RPC.FOK_NOT_FILLED, 'Fill-or-kill not filled', null)
  const fillPrice = isBuy ? q.askE18 : q.bidE18
  const idx = engine.market.indexE18(inst.currency)
  if (fillable > 0n) {
    const fee = tradeFeeE18(inst, 'taker', fillable, idx, fillPrice, true)
    if (fee > mulE18(o.maxFeeE18, fillable))
      throw new SimRpcError(RPC.MAX_FEE_TOO_LOW, 'Max fee order param is too low', `fee ${fee}`)
  }
  // Worst case for margin: the whole order at its limit price.
  const cash = isBuy ? -mulE18(o.amountE18, o.limitPriceE18) : mulE18(o.amountE18, fillPrice || o.limitPriceE18)
  const feeEstimate = tradeFeeE18(inst, 'taker', o.amountE18, idx, o.limitPriceE18, true)
  const ok = marginOk(engine, sub, {
    cash: cash - feeEstimate,
    position: { instrument: inst.name, delta: isBuy ? o.amountE18 : -o.amountE18, priceE18: o.limitPriceE18 },
  })
  if (!ok) throw rpcErr.funds('Insufficient buying power, consider reducing order size.')

  const order: SimOrder = {
    orderId: randomUUID(),
    subaccountId: sub.id,
    instrument: inst.name,
    direction: o.direction,
    amountE18: o.amountE18,
    filledE18: 0n,
    limitPriceE18: o.limitPriceE18,
    maxFeeE18: o.maxFeeE18,
    feeE18: 0n,
    notionalFilledE18: 0n,
    status: 'open',
    timeInForce: o.timeInForce,
    cancelReason: '',
    label: o.label,
    mmp: o.mmp,
    nonce: o.nonce,
    signer: o.signer,
    signature: o.signature,
    expirySec: o.expirySec,
    createdMs: now,
    updatedMs: now,
  }
  engine.orders.set(order.orderId, order)
  const trades: SimTrade[] = []
  if (fillable > 0n) trades.push(fill(engine, sub, inst, order, fillable, fillPrice, 'taker', true))
  if (order.filledE18 === order.amountE18) order.status = 'filled'
  else if (o.timeInForce === 'ioc') {
    order.status = 'cancelled'
    order.cancelReason = 'ioc_or_market_partial_fill'
  }
  return { order, trades }
}

/** Applies one fill to the subaccount and records the trade. */
export function fill(
  engine: SimState,
  sub: SimSubaccount,
  inst: SimInstrument,
  order: SimOrder,
  amountE18: bigint,
  priceE18: bigint,
  role: 'maker' | 'taker',
  includeBase: boolean,
): SimTrade {
  const now = engine.now()
  const idx = engine.market.indexE18(inst.currency)
  const fee = tradeFeeE18(inst, role, amountE18, idx, priceE18, includeBase)
  const signed = order.direction === 'buy' ? amountE18 : -amountE18
  const premium = mulE18(amountE18, priceE18)
  const cash = sub.balances.get('USDC') ?? 0n
  sub.balances.set('USDC', cash + (order.direction === 'buy' ? -premium : premium) - fee)
  const pos = sub.positions.get(inst.name) ?? {
    amountE18: 0n,
    averagePriceE18: priceE18,
    cumulativeFundingE18: 0n,
    realizedPnlE18: 0n,
    createdMs: now,
  }
  const next = pos.amountE18 + signed
  if (pos.amountE18 === 0n || Math.sign(Number(pos.amountE18)) === Math.sign(Number(signed))) {
    const total = absBig(pos.amountE18) + amountE18
    pos.averagePriceE18 = ((mulE18(absBig(pos.amountE18), pos.averagePriceE18) + premium) * 10n ** 18n) / total
  }
  pos.amountE18 = next
  if (next === 0n) sub.positions.delete(inst.name)
  else sub.positions.set(inst.name, pos)
  order.filledE18 += amountE18
  order.feeE18 += fee
  order.notionalFilledE18 += premium
  order.updatedMs = now
  const trade: SimTrade = {
    tradeId: randomUUID(),
    orderId: order.orderId,
    subaccountId: sub.id,
    instrument: inst.name,
    direction: order.direction,
    amountE18,
    priceE18,
    feeE18: fee,
    role,
    indexE18: idx,
    markE18: engine.market.quote(inst, now).markE18,
    timestampMs: now,
    transactionId: randomUUID(),
    label: order.label,
  }
  engine.history.trades.push(trade)
  return trade
}

/** The market maker takes resting orders its quote has moved through, at their limit price. */
export function sweepRestingOrders(engine: SimState): void {
  for (const order of engine.orders.values()) {
    if (order.status !== 'open') continue
    const inst = engine.catalog.get(order.instrument)
    const sub = engine.subaccounts.get(order.subaccountId)
    if (!inst || !sub) continue
    const q = engine.market.quote(inst, engine.now())
    const crossed = order.direction === 'buy' ? q.askE18 <= order.limitPriceE18 : q.bidE18 >= order.limitPriceE18
    if (!crossed) continue
    fill(engine, sub, inst, order, order.amountE18 - order.filledE18, order.limitPriceE18, 'maker', false)
    order.status = 'filled'
  }
}

export function cancelOrder(engine: SimState, subaccountId: number, orderId: string): SimOrder {
  const o = engine.orders.get(orderId)
  if (!o || o.subaccountId !== subaccountId) throw new SimRpcError(RPC.ORDER_DOES_NOT_EXIST, 'Does not exist', orderId)
  if (o.status !== 'open') throw new SimRpcError(RPC.ORDER_DOES_NOT_EXIST, 'Does not exist', `order is ${o.status}`)
  o.status = 'cancelled'
  o.cancelReason = 'user_request'
  o.updatedMs = engine.now()
  return o
}
