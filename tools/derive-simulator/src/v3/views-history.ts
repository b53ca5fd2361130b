/**
 * The simulator's history records (../sim-types.ts) in v3's entry shapes (@wh/exchange V3Wire).
 * The simulator executes every operation at once, so each is `Settled` in a batch of its own
 * (the batch uuid is the operation's) with the hash it recorded; funding settlements, which the
 * engine books per hour, get a stable uuid of their own. Deposits and transfers name the asset as
 * requests do (`USDC`); withdrawals give the protocol asset address and the ERC-20, as the spec says.
 */

import type { V3Wire as W } from '@wh/exchange'
import { fromE18 } from '@wh/exchange'
import { type Hex, keccak256, toHex } from 'viem'
import { COLLATERALS } from '../assets'
import type { SimEngine } from '../engine'
import type {
  DepositRecord,
  FundingRecord,
  InterestRecord,
  SettlementRecord,
  TransferRecord,
  WithdrawalRecord,
} from '../sim-types'

/** Rows per answer of v3's capped histories (deposits, withdrawals, transfers, interest), newest first. */
export const V3_SIM_HISTORY_CAP = 1000

/** A uuid-shaped stable name for something recorded without one. */
export function stableUuid(...parts: Array<string | number>): string {
  const h = keccak256(toHex(parts.join(':'))).slice(2)
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`
}

/** The newest `V3_SIM_HISTORY_CAP` rows, newest first. */
export function capNewest<T extends { timestampMs: number }>(rows: T[]): T[] {
  return [...rows].sort((a, b) => b.timestampMs - a.timestampMs).slice(0, V3_SIM_HISTORY_CAP)
}

/** One page of `items` and the spec's pagination (`page` from 1). */
export function page<T>(items: T[], p: { page?: number | null; page_size?: number | null }) {
  const size = p.page_size ?? 100
  const n = p.page ?? 1
  return {
    items: items.slice((n - 1) * size, n * size),
    pagination: { count: items.length, num_pages: Math.ceil(items.length / size) },
  }
}

/** The owner of a subaccount (v3 names wallets by their owner). */
export function ownerOf(engine: SimEngine, subaccountId: number): string {
  const sub = engine.subaccounts.get(subaccountId)
  return (sub && engine.wallet(sub.wallet)?.owner) ?? sub?.wallet ?? ''
}

const settled = { batch_status: 'Settled' as const }

export function depositEntry(engine: SimEngine, d: DepositRecord): W.DepositEntry {
  return {
    ...settled,
    action_id: null,
    amount: fromE18(d.amountE18),
    asset: d.asset,
    batch_uuid: d.transactionId,
    fee: '0',
    new_subaccount: d.newSubaccount ?? false,
    operation_id: d.transactionId,
    subaccount_id: d.subaccountId,
    timestamp: d.timestampMs,
    tx_hash: d.txHash,
    wallet: ownerOf(engine, d.subaccountId),
  }
}

export function withdrawalEntry(engine: SimEngine, w: WithdrawalRecord): W.WithdrawalEntry {
  const owner = ownerOf(engine, w.subaccountId)
  return {
    ...settled,
    amount: fromE18(w.amountE18),
    asset: COLLATERALS[w.asset].address,
    batch_uuid: w.transactionId,
    erc20_address: COLLATERALS[w.asset].underlyingErc20,
    fee: fromE18(w.feeE18 ?? 0n),
    operation_id: w.transactionId,
    recipient: w.recipient ?? owner,
    subaccount_id: w.subaccountId,
    timestamp: w.timestampMs,
    tx_hash: w.txHash,
    wallet: owner,
  }
}

/** A transfer as the subaccount of the row sees it: the sender's row gross with the fee, the receiver's net. */
export function transferEntry(engine: SimEngine, t: TransferRecord): W.TransferEntry {
  const [from, to] = t.outgoing ? [t.subaccountId, t.counterparty] : [t.counterparty, t.subaccountId]
  return {
    ...settled,
    amount: fromE18(t.amountE18),
    asset: t.asset,
    batch_uuid: t.transactionId,
    fee: fromE18(t.feeE18),
    from_subaccount_id: from,
    from_wallet: ownerOf(engine, from),
    is_outgoing: t.outgoing,
    operation_id: t.transactionId,
    timestamp: t.timestampMs,
    to_subaccount_id: to,
    to_wallet: ownerOf(engine, to),
    tx_hash: t.txHash,
  }
}

export function interestEntry(i: InterestRecord): W.InterestPayment {
  return { interest: fromE18(i.interestE18), subaccount_id: i.subaccountId, timestamp: i.timestampMs }
}

export function fundingEntry(f: FundingRecord): W.PerpSettlementEventResponse {
  return {
    ...settled,
    batch_uuid: stableUuid('funding', f.subaccountId, f.instrument, f.timestampMs),
    funding: fromE18(f.fundingE18),
    instrument_name: f.instrument,
    pnl: fromE18(f.fundingE18),
    subaccount_id: f.subaccountId,
    timestamp: f.timestampMs,
    tx_hash: null,
  }
}

/** The engine's settlement pnl is the cash the expiry moved: v3's `settlement_value`. */
export function settlementEntry(s: SettlementRecord): W.OptionSettlementResponse {
  return {
    amount: fromE18(s.amountE18),
    expiry: s.expirySec,
    instrument_name: s.instrument,
    settlement_price: fromE18(s.settlementPriceE18),
    settlement_value: fromE18(s.pnlE18),
    subaccount_id: s.subaccountId,
  }
}

/** `public/get_transaction`: the operation's batch status, its data serialized (opaque to clients). */
export function transactionResult(engine: SimEngine, opUuid: string): W.GetTransactionResult | undefined {
  const tx = engine.transactions.get(opUuid)
  if (!tx) return undefined
  const failed = tx.status === 'reverted' || tx.status === 'ignored' || tx.status === 'timed_out'
  return {
    data: JSON.stringify({ kind: tx.kind, ...tx.data }),
    status: tx.status === 'settled' ? 'Settled' : failed ? 'ExecutingError' : 'Batching',
    // an L1 payout's batch names the L1 transaction that paid it (../l1-withdrawals.ts)
    transaction_hash:
      tx.status === 'settled' ? ((tx.data.l1TxHash as Hex | undefined) ?? keccak256(toHex(tx.id))) : null,
    error_log: failed ? String(tx.data.error ?? 'the operation failed in its batch') : null,
  }
}
