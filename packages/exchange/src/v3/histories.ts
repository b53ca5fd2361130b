/**
 * The service's history reads on v3 (docs/exchange-v3.md "Histories on v3"), answered in v2's
 * shapes (./adapt-history.ts). The worker's "deposits" and "withdrawals" of a subaccount are its
 * movements with the platform's funding subaccount (./movements.ts), so they are read from the
 * spot-transfer history; L1 deposits and withdrawals have their own reads. v3 caps the deposit,
 * withdrawal, transfer and interest histories at 1000 rows per answer: every window is read in
 * full here by narrowing its end to the oldest entry seen. Entries come back oldest first.
 */
import type { HistoryWindow } from '../client/requests'
import type * as T from '../protocol/types'
import * as H from './adapt-history'
import { fundingSubaccountOf, type V3Port } from './port'
import type * as W from './wire.gen'

/** Rows per answer of the capped v3 histories. */
export const V3_HISTORY_CAP = 1000
/** Windows read for one history call at most (100,000 entries). */
const MAX_WINDOWS = 100

/**
 * Every entry in [start, end] of a history capped at V3_HISTORY_CAP rows per answer. A full answer
 * keeps its entries newer than its oldest timestamp and reads again up to that timestamp, so
 * entries sharing it come in the next answer whole; a full answer of one timestamp cannot be paged.
 */
export async function readCapped<E extends { timestamp: number }>(
  read: (start: number, end: number | null) => Promise<E[]>,
  start = 0,
  end: number | null = null,
): Promise<E[]> {
  const out: E[] = []
  let upTo = end
  for (let i = 0; i < MAX_WINDOWS; i++) {
    const rows = await read(start, upTo)
    if (rows.length < V3_HISTORY_CAP) return [...out, ...rows].sort((a, b) => a.timestamp - b.timestamp)
    const oldest = Math.min(...rows.map((r) => r.timestamp))
    if (rows.every((r) => r.timestamp === oldest))
      throw new Error(`more than ${V3_HISTORY_CAP} history entries at ${oldest}: the window cannot be paged`)
    out.push(...rows.filter((r) => r.timestamp > oldest))
    upTo = oldest
  }
  throw new Error(`history window [${start}, ${end}] holds more than ${MAX_WINDOWS * V3_HISTORY_CAP} entries`)
}

/** The entries with their asset named as the service names it (V3Port.assetName). */
function named<E extends { asset: string }>(port: V3Port, rows: E[]): E[] {
  return rows.map((e) => ({ ...e, asset: port.assetName(e.asset) }))
}

async function transfers(port: V3Port, p: HistoryWindow): Promise<W.TransferEntry[]> {
  const rows = await readCapped(
    async (start_timestamp, end_timestamp) =>
      (
        await port.call('private/get_erc20_transfer_history', {
          subaccount_id: p.subaccount_id,
          start_timestamp,
          end_timestamp,
        })
      ).transfers,
    p.start_timestamp,
    p.end_timestamp ?? null,
  )
  return named(port, rows)
}

/** What came into the subaccount from the funding subaccount: the worker's create_subaccount and deposit movements. */
export async function depositHistory(port: V3Port, p: HistoryWindow): Promise<{ events: T.DepositEvent[] }> {
  const funding = fundingSubaccountOf(port)
  const rows = await transfers(port, p)
  return {
    events: rows
      .filter((e) => e.to_subaccount_id === p.subaccount_id && e.from_subaccount_id === funding)
      .map(H.depositOfTransfer),
  }
}

/** What went from the subaccount to the funding subaccount: the worker's release legs and fee collections. */
export async function withdrawalHistory(port: V3Port, p: HistoryWindow): Promise<{ events: T.WithdrawalEvent[] }> {
  const funding = fundingSubaccountOf(port)
  const rows = await transfers(port, p)
  return {
    events: rows
      .filter((e) => e.from_subaccount_id === p.subaccount_id && e.to_subaccount_id === funding)
      .map(H.withdrawalOfTransfer),
  }
}

/** Every spot transfer of the subaccount, either way. */
export async function transferHistory(port: V3Port, p: HistoryWindow) {
  return { events: (await transfers(port, p)).map((e) => H.transferOf(e, p.subaccount_id)) }
}

/**
 * The fee the exchange took from a movement out of the funding subaccount: `fee` of the sender's row of the
 * operation (spec `TransferEntry`: the sender's row carries the gross amount and the in-kind fee, the receiver's
 * the net), read from `start_timestamp` on. Throws while the operation is not in the history (retried).
 */
export async function movementFee(port: V3Port, p: { transaction_id: string; start_timestamp: number }) {
  const funding = fundingSubaccountOf(port)
  const rows = await transfers(port, { subaccount_id: funding, start_timestamp: p.start_timestamp })
  const row = rows.find((e) => e.operation_id === p.transaction_id && e.from_subaccount_id === funding)
  if (!row) throw new Error(`transfer ${p.transaction_id} is not in the funding subaccount's history yet`)
  return row.fee
}

/** L1 deposits into the subaccount (`private/get_deposit_history`): the funding subaccount's top-ups. */
export async function l1DepositHistory(port: V3Port, p: HistoryWindow) {
  const rows = await readCapped(
    async (start_timestamp, end_timestamp) =>
      (
        await port.call('private/get_deposit_history', {
          subaccount_id: p.subaccount_id,
          start_timestamp,
          end_timestamp,
        })
      ).deposits,
    p.start_timestamp,
    p.end_timestamp ?? null,
  )
  return { events: named(port, rows).map(H.depositOfL1) }
}

/** L1 withdrawals out of the subaccount (`private/get_withdrawal_history`). */
export async function l1WithdrawalHistory(port: V3Port, p: HistoryWindow) {
  const rows = await readCapped(
    async (start_timestamp, end_timestamp) =>
      (
        await port.call('private/get_withdrawal_history', {
          subaccount_id: p.subaccount_id,
          start_timestamp,
          end_timestamp,
        })
      ).withdrawals,
    p.start_timestamp,
    p.end_timestamp ?? null,
  )
  return { events: named(port, rows).map(H.withdrawalOfL1) }
}

export async function interestHistory(port: V3Port, p: HistoryWindow): Promise<{ events: T.InterestEvent[] }> {
  const rows = await readCapped(
    async (start_timestamp, end_timestamp) =>
      (
        await port.call('private/get_interest_history', {
          subaccount_id: p.subaccount_id,
          start_timestamp,
          end_timestamp,
        })
      ).events,
    p.start_timestamp,
    p.end_timestamp ?? null,
  )
  return { events: rows.map(H.interestOf) }
}

/**
 * One page of the perp funding history. A settlement whose batch failed (`*Error`) did not apply
 * and is left out; one still on its way counts (the balance already shows it).
 */
export async function fundingHistory(
  port: V3Port,
  p: HistoryWindow & { instrument_name?: string; page?: number; page_size?: number },
): Promise<{ events: T.FundingEvent[]; pagination: T.Pagination }> {
  const r = await port.call('private/get_funding_history', p)
  return {
    events: r.events.filter((e) => !e.batch_status.endsWith('Error')).map(H.fundingOf),
    pagination: r.pagination,
  }
}

export async function optionSettlementHistory(port: V3Port, subaccount_id: number) {
  const r = await port.call('private/get_option_settlement_history', { subaccount_id })
  return { subaccount_id, settlements: r.settlements.map(H.settlementOf) }
}

/** A movement's settlement by its operation uuid (the `transaction_id` sendSigned answered). */
export async function transaction(port: V3Port, op_uuid: string) {
  return H.transactionOf(await port.call('public/get_transaction', { op_uuid }))
}
