/** Histories per subaccount: trades, deposits, withdrawals, transfers, interest, funding, settlements. */
import { fromE18 } from '../protocol/decimal'
import { type Handler, ownSubaccount, window } from './handler'
import type { CashEvent } from './sim-types'
import { tradeView } from './views'

const MAX_PAGE_SIZE = 1000

function pick<T extends CashEvent>(rows: T[], subId: number, [start, end]: [number, number]): T[] {
  return rows.filter((r) => r.subaccountId === subId && r.timestampMs >= start && r.timestampMs <= end)
}

function page<T>(rows: T[], p: Record<string, unknown>) {
  const size = Math.min(Number(p.page_size ?? 100), MAX_PAGE_SIZE)
  const n = Math.max(Number(p.page ?? 1), 1)
  return {
    items: rows.slice((n - 1) * size, n * size),
    pagination: { count: rows.length, num_pages: Math.ceil(rows.length / size) },
  }
}

export const historyMethods: Record<string, Handler> = {
  'private/get_trade_history': (ctx, p) => {
    const sub = ownSubaccount(ctx, p.subaccount_id)
    const rows = pick(
      ctx.engine.history.trades.map((t) => ({ ...t, subaccountId: t.subaccountId })),
      sub.id,
      window(p),
    ).filter((t) => p.instrument_name === undefined || t.instrument === p.instrument_name)
    const { items, pagination } = page(rows, p)
    return { subaccount_id: sub.id, trades: items.map(tradeView), pagination }
  },

  'private/get_deposit_history': (ctx, p) => {
    const sub = ownSubaccount(ctx, p.subaccount_id)
    const events = pick(ctx.engine.history.deposits, sub.id, window(p)).map((d) => ({
      amount: fromE18(d.amountE18),
      asset: d.asset,
      timestamp: d.timestampMs,
      transaction_id: d.transactionId,
      tx_hash: d.txHash,
      tx_status: 'settled',
    }))
    return { events }
  },

  'private/get_withdrawal_history': (ctx, p) => {
    const sub = ownSubaccount(ctx, p.subaccount_id)
    const events = pick(ctx.engine.history.withdrawals, sub.id, window(p)).map((w) => ({
      amount: fromE18(w.amountE18),
      asset: w.asset,
      timestamp: w.timestampMs,
      tx_hash: w.txHash,
      tx_status: 'settled',
    }))
    return { events }
  },

  'private/get_erc20_transfer_history': (ctx, p) => {
    const sub = ownSubaccount(ctx, p.subaccount_id)
    const events = pick(ctx.engine.history.transfers, sub.id, window(p)).map((t) => ({
      amount: fromE18(t.amountE18),
      asset: t.asset,
      counterparty_subaccount_id: t.counterparty,
      is_outgoing: t.outgoing,
      timestamp: t.timestampMs,
      tx_hash: t.txHash,
    }))
    return { events }
  },

  'private/get_interest_history': (ctx, p) => {
    const sub = ownSubaccount(ctx, p.subaccount_id)
    const events = pick(ctx.engine.history.interest, sub.id, window(p)).map((i) => ({
      interest: fromE18(i.interestE18),
      timestamp: i.timestampMs,
    }))
    return { events }
  },

  'private/get_funding_history': (ctx, p) => {
    const sub = ownSubaccount(ctx, p.subaccount_id)
    const rows = pick(ctx.engine.history.funding, sub.id, window(p)).filter(
      (f) => p.instrument_name === undefined || f.instrument === p.instrument_name,
    )
    const { items, pagination } = page(rows, p)
    const events = items.map((f) => ({
      funding: fromE18(f.fundingE18),
      pnl: fromE18(f.fundingE18),
      instrument_name: f.instrument,
      timestamp: f.timestampMs,
    }))
    return { events, pagination }
  },

  'private/get_option_settlement_history': (ctx, p) => {
    const sub = ownSubaccount(ctx, p.subaccount_id)
    const settlements = pick(ctx.engine.history.settlements, sub.id, [0, Number.MAX_SAFE_INTEGER]).map((s) => ({
      subaccount_id: sub.id,
      instrument_name: s.instrument,
      expiry: s.expirySec,
      amount: fromE18(s.amountE18),
      settlement_price: fromE18(s.settlementPriceE18),
      option_settlement_pnl: fromE18(s.pnlE18),
      option_settlement_pnl_excl_fees: fromE18(s.pnlE18),
    }))
    return { subaccount_id: sub.id, settlements }
  },
}
