/**
 * Buying a leg back (docs/trading.md "Buying a leg back"): a closing leg's one immediate-or-cancel
 * buy at the limit the user accepted, and the open leg whose late fills bought it all. Called by
 * the placing step (run.ts) for the legs in `closing` and `open`.
 */
import { errorMessage } from '@wh/core'
import type { Sql } from '@wh/db'
import {
  ceilToE12,
  ExchangeError,
  ExchangeInsufficientMarginError,
  fromE18,
  type Instrument,
  orderMaxFeeFloorE18,
  toE18,
} from '@wh/exchange'
import { ingestFills } from '../fills/ingest'
import { roundDownToTick } from '../placing'
import {
  closeBoughtBack,
  finishClosing,
  markBuyBackPending,
  recordBuyBackOrder,
  reopenClosing,
} from '../position-store'
import type { Live, PlaceDeps } from './types'

interface ClosingRow {
  instrument: string
  expiry_sec: number
  filled_e18: string
  bought_e18: string
  close_limit_e18: string | null
  order_id: string | null
}

/**
 * closing: buy back what is still short, once (docs/trading.md "Buying a leg back").
 *
 * 1. remaining = filled − bought, read AFTER this run ingested the subaccount's fills. 0 → `closed`.
 * 2. No order of this closing sent yet (`order_id` null): mark the leg (`order_id` =
 *    BUYBACK_PENDING, a conditional UPDATE: of two overlapping runs one wins), then send ONE
 *    immediate-or-cancel buy of `remaining` at the stored limit, labelled with the position id,
 *    reduce-only; ingest its fills at once; bought in full → `closed`, else → `open` with why.
 * 3. A refusal (margin: a covered call's subaccount may hold too little USDC; any other refusal)
 *    → `open` with the reason: the leg runs to expiry unless the user asks again (a new quote).
 *
 * Crash safety: an IOC order lives only for the instant it is matched, so once sent nothing of it
 * can fill later. A run that dies after sending (before ingesting, or before storing the outcome)
 * leaves the leg `closing` with the marker set; the next run ingests the subaccount's fills FIRST,
 * so whatever that order bought is in `bought_e18` before anything else happens: all of it → `closed`;
 * less → the marker says an order was already sent for this quote, so it sends nothing and returns
 * the leg to `open`. Either way nothing is bought twice, and never more than the leg is short (the
 * amount comes from the ingested fills and the order is reduce-only). A run that dies after the
 * marker but before sending also returns the leg to `open`: the user asks again, at a fresh price.
 */
export async function close(deps: PlaceDeps, p: Live, now: Date): Promise<string> {
  const { sql } = deps
  const [c] = await sql<ClosingRow[]>`
    select instrument, expiry_sec::float8 as expiry_sec, filled_e18::text, bought_e18::text,
      close_limit_e18::text, order_id
    from positions where id = ${p.id} and state = 'closing'`
  if (!c) return 'moved'
  const remaining = BigInt(c.filled_e18) - BigInt(c.bought_e18)
  if (remaining <= 0n) return finishClose(sql, p.id)
  // an expired option cannot be bought: the settlement (ingested above, or next run) ends the leg
  if (c.expiry_sec * 1000 <= now.getTime()) return 'waiting_settlement'
  if (c.order_id !== null)
    return reopen(
      sql,
      p.id,
      `the buy-back order bought ${fromE18(BigInt(c.bought_e18))} of ${fromE18(BigInt(c.filled_e18))}: the rest stays sold`,
    )
  if (p.stopped_at) return reopen(sql, p.id, 'the subaccount is stopped by reconciliation: the leg stays sold')
  if (!(await markBuyBackPending(sql, p.id))) return 'moved'
  const sent = await sendBuyBack(deps, p, c, remaining)
  if (sent.kind === 'refused') return reopen(sql, p.id, sent.reason)
  if (sent.kind === 'unknown') return 'buyback_unknown' // the next run decides from the ingested fills
  await deps.hooks?.afterBuyBackSent?.(p.id)
  await recordBuyBackOrder(sql, p.id, sent.orderId)
  await ingestFills(deps, { id: p.subaccount_id, userId: p.user_id, exchangeId: Number(p.exchange_id) })
  const [after] = await sql<{ filled_e18: string; bought_e18: string }[]>`
    select filled_e18::text, bought_e18::text from positions where id = ${p.id}`
  const left = BigInt(after?.filled_e18 ?? '0') - BigInt(after?.bought_e18 ?? '0')
  if (left <= 0n) return finishClose(sql, p.id)
  return reopen(
    sql,
    p.id,
    `no ask at or below the limit ${fromE18(BigInt(c.close_limit_e18 ?? '0'))} for ${fromE18(left)} contracts: they stay sold`,
  )
}

type BuyBackSend =
  | { kind: 'sent'; orderId: string }
  /** the exchange refused it: nothing was bought */
  | { kind: 'refused'; reason: string }
  /** no answer (transport, timeout): it may have landed; the fills will tell */
  | { kind: 'unknown'; reason: string }

/**
 * Sends a closing leg's buy-back: immediate-or-cancel, reduce-only, `amountE18` at the stored limit
 * rounded down to the tick (never above what the user accepted), labelled with the position id.
 */
async function sendBuyBack(
  deps: Pick<PlaceDeps, 'exchange'>,
  p: Pick<Live, 'id' | 'exchange_id'>,
  c: Pick<ClosingRow, 'instrument' | 'close_limit_e18'>,
  amountE18: bigint,
): Promise<BuyBackSend> {
  try {
    const inst = await deps.exchange.getInstrument(c.instrument)
    const t = await deps.exchange.getTicker(c.instrument)
    const limit = roundDownToTick(BigInt(c.close_limit_e18 ?? '0'), toE18(inst.tick_size))
    if (limit <= 0n) return { kind: 'refused', reason: 'the buy-back has no limit price' }
    const { order } = await deps.exchange.order({
      subaccount_id: Number(p.exchange_id),
      instrument_name: c.instrument,
      direction: 'buy',
      amount: fromE18(amountE18),
      limit_price: fromE18(limit),
      max_fee: fromE18(buyBackMaxFee(inst, toE18(t.index_price), limit)),
      time_in_force: 'ioc',
      reduce_only: true,
      label: p.id,
    })
    return { kind: 'sent', orderId: order.order_id }
  } catch (e) {
    if (e instanceof ExchangeInsufficientMarginError)
      return { kind: 'refused', reason: `the exchange refused the buy-back for margin: ${errorMessage(e)}` }
    if (e instanceof ExchangeError && !e.retryable)
      return { kind: 'refused', reason: `the exchange refused the buy-back: ${errorMessage(e)}` }
    return { kind: 'unknown', reason: errorMessage(e) }
  }
}

/**
 * The most fee a buy-back accepts per contract: Derive's floor for a signed max fee, 2 × the taker rate
 * × max(index, limit) + the base fee (orderMaxFeeFloorE18; below it the order is refused, 11023). The fee
 * charged is far less (the rate part is capped at a share of the option's value, the base spread over
 * the amount); this is a ceiling the exchange requires, not a price.
 */
function buyBackMaxFee(inst: Pick<Instrument, 'taker_fee_rate' | 'base_fee'>, indexE18: bigint, limitE18: bigint) {
  const rates = { takerRateE18: toE18(inst.taker_fee_rate), baseFeeE18: toE18(inst.base_fee) }
  return ceilToE12(orderMaxFeeFloorE18(rates, indexE18, limitE18))
}

/** closing → closed: everything sold is bought back. */
async function finishClose(sql: Sql, id: string): Promise<string> {
  await finishClosing(sql, id)
  return 'closed'
}

/** closing → open: the leg stays sold (to expiry) with the reason; the user may ask again. */
async function reopen(sql: Sql, id: string, reason: string): Promise<string> {
  await reopenClosing(sql, id, reason)
  return 'close_refused'
}

/**
 * open: nothing to do, unless buy-back fills that were not visible when its closing ended (an
 * exchange's history may lag) have since bought the whole leg: then it is closed.
 */
export async function closeIfBoughtBack(sql: Sql, p: Live): Promise<string> {
  // as read at the start of the run; the UPDATE re-checks on the row as it is now
  if (BigInt(p.bought_e18) <= 0n) return 'open'
  return (await closeBoughtBack(sql, p.id)) ? 'closed' : 'open'
}
