/**
 * v3 histories (src/v3/wire.gen.ts) in the v2 shapes the service reads (protocol/types.ts).
 *
 * Ids: every v3 money movement is one operation named by a uuid (`op_uuid` in the answer that
 * accepted it, `operation_id` in history entries; the spec calls both the operation's stable
 * uuid). That uuid is the movement's id here, in the slot the service keys movements by:
 * `transaction_id` of a deposit, and `tx_hash` of a withdrawal (v2's withdrawal history had no
 * other id). A v3 `tx_hash` is the settling batch's L1 transaction, shared by every operation of
 * the batch and null until then, so it cannot name one movement. docs/exchange-v3.md.
 */
import type * as T from '../protocol/types'
import { txStatusOfBatch } from './adapt'
import type * as W from './wire.gen'

/** A transfer into a subaccount (a worker's funding: create_subaccount or deposit), as v2's deposit event. */
export function depositOfTransfer(e: W.TransferEntry): T.DepositEvent {
  return {
    amount: e.amount,
    asset: e.asset,
    timestamp: e.timestamp,
    transaction_id: e.operation_id,
    tx_hash: e.tx_hash ?? '',
    tx_status: txStatusOfBatch(e.batch_status),
  }
}

/** A transfer out of a subaccount (a release leg, a fee collection), as v2's withdrawal event. */
export function withdrawalOfTransfer(e: W.TransferEntry): T.WithdrawalEvent {
  return {
    amount: e.amount,
    asset: e.asset,
    timestamp: e.timestamp,
    tx_hash: e.operation_id,
    tx_status: txStatusOfBatch(e.batch_status),
  }
}

/** Any spot transfer, seen from subaccount `sub`. */
export function transferOf(e: W.TransferEntry, sub: number): T.Erc20TransferEvent & { transaction_id: string } {
  const outgoing = e.from_subaccount_id === sub
  return {
    amount: e.amount,
    asset: e.asset,
    counterparty_subaccount_id: outgoing ? e.to_subaccount_id : e.from_subaccount_id,
    is_outgoing: outgoing,
    timestamp: e.timestamp,
    tx_hash: e.tx_hash ?? '',
    transaction_id: e.operation_id,
  }
}

/** An L1 deposit (OnchainActionManager or a deposit address); the credit was `amount` − `fee`. */
export function depositOfL1(e: W.DepositEntry): T.DepositEvent & { fee: string; new_subaccount: boolean } {
  return {
    amount: e.amount,
    asset: e.asset,
    timestamp: e.timestamp,
    transaction_id: e.operation_id,
    tx_hash: e.tx_hash ?? '',
    tx_status: txStatusOfBatch(e.batch_status),
    fee: e.fee,
    new_subaccount: e.new_subaccount,
  }
}

/** An L1 withdrawal (`private/withdraw`); the payout was `amount` − `fee`. */
export function withdrawalOfL1(e: W.WithdrawalEntry): T.WithdrawalEvent & { fee: string; recipient: string } {
  return {
    amount: e.amount,
    asset: e.asset,
    timestamp: e.timestamp,
    tx_hash: e.operation_id,
    tx_status: txStatusOfBatch(e.batch_status),
    fee: e.fee,
    recipient: e.recipient,
  }
}

export function interestOf(e: W.InterestPayment): T.InterestEvent {
  return { interest: e.interest, timestamp: e.timestamp }
}

export function fundingOf(e: W.PerpSettlementEventResponse): T.FundingEvent {
  return { funding: e.funding, instrument_name: e.instrument_name, pnl: e.pnl, timestamp: e.timestamp }
}

/**
 * v3's `settlement_value` is the cash the expiry moved (intrinsic value × signed amount), which is
 * what the service reads as v2's `option_settlement_pnl`; v3 reports no fee apart.
 */
export function settlementOf(s: W.OptionSettlementResponse): T.OptionSettlement {
  return {
    subaccount_id: s.subaccount_id,
    instrument_name: s.instrument_name,
    expiry: s.expiry,
    amount: s.amount,
    settlement_price: s.settlement_price,
    option_settlement_pnl: s.settlement_value,
    option_settlement_pnl_excl_fees: s.settlement_value,
  }
}

/**
 * `public/get_transaction` as v2's `{ status, data }`: the batch status as a transaction status, and
 * the operation's serialized data kept opaque under `operation` (its keys, the sender's
 * `subaccount_id` among them perhaps, must not be read as v2's `data.subaccount_id`, the created one).
 */
export function transactionOf(r: W.GetTransactionResult): { status: T.TxStatus; data: Record<string, unknown> } {
  return {
    status: txStatusOfBatch(r.status),
    data: {
      operation: r.data,
      batch_status: r.status ?? null,
      transaction_hash: r.transaction_hash ?? null,
      error_log: r.error_log ?? null,
    },
  }
}

/** `private/order_debug` as v2's debug result; v3's extra fields (domain separator, signer, input) in `raw_data`. */
export function orderDebugOf(r: W.OrderDebugResponse): T.OrderDebugResult {
  const { encoded_data, encoded_data_hashed, action_hash, typed_data_hash, ...rest } = r
  return { encoded_data, encoded_data_hashed, action_hash, typed_data_hash, raw_data: { ...rest } }
}
