/**
 * The idempotency key of an event, derived from its payload with the builders of keys.ts, so a
 * caller cannot pair a payload with the key of another fact (spec 6.1).
 */

import type { EventType } from './events'
import {
  accrualKey,
  chainEventKey,
  ownTxKey,
  reconcileAdjustmentKey,
  reconcileStopKey,
  releaseKey,
  settlementKey,
  signalKey,
  stopClearedKey,
  stopKey,
  subaccountFundedKey,
  tradeKey,
  tradeRejectedKey,
} from './keys'
import type { Payloads } from './payloads'
import { adjustedAccount } from './rules/reconciliation_adjustment'

type KeyOf = { [T in EventType]: (p: Payloads[T]) => string }

const KEY_OF: KeyOf = {
  deposit_detected: (p) => chainEventKey(p),
  // the service sends these transactions itself: slot 0 (spec 6.1)
  deposit_swept: (p) => ownTxKey({ chain: p.chain, txHash: p.txHash, slot: 0 }),
  bridged: (p) => ownTxKey({ chain: p.fromChain, txHash: p.txHash, slot: 0 }),
  swap_executed: (p) => ownTxKey({ chain: p.chain, txHash: p.txHash, slot: 0 }),
  // a transaction either executed or reverted: both claim slot 0, the first fact wins
  swap_reverted: (p) => ownTxKey({ chain: p.chain, txHash: p.txHash, slot: 0 }),
  withdrawal_sent: (p) => ownTxKey({ chain: p.chain, txHash: p.txHash, slot: 0 }),
  gas_spent: (p) => ownTxKey(p),
  subaccount_funded: (p) => subaccountFundedKey(p.transactionId),
  subaccount_released: (p) => releaseKey(p.rowId),
  option_sold: (p) => tradeKey(p.tradeId),
  option_settled: (p) => settlementKey(p),
  interest_accrued: (p) => accrualKey({ subaccountId: p.subaccountId, type: 'interest', bucketTs: p.bucketTs }),
  funding_paid: (p) => accrualKey({ subaccountId: p.subaccountId, type: 'funding', bucketTs: p.bucketTs }),
  trade_rejected: (p) => tradeRejectedKey(p.orderId),
  signal_received: (p) => signalKey(p.signalId),
  reconciliation_adjustment: (p) =>
    reconcileAdjustmentKey({
      subaccountId: p.subaccountId,
      account: adjustedAccount(p),
      bucket: p.bucket,
      delta: p.delta,
    }),
  stop_raised: (p) => (p.source === 'reconciliation' ? reconcileStopKey(p) : stopKey(p)),
  stop_cleared: (p) => stopClearedKey(p),
  // the second fact about the failed transaction: its gas_spent holds slot 0
  withdrawal_gas_charged: (p) => ownTxKey({ chain: p.chain, txHash: p.txHash, slot: 1 }),
}

/** The spec 6.1 key of an event. */
export function eventKey<T extends EventType>(type: T, payload: Payloads[T]): string {
  return (KEY_OF[type] as (p: Payloads[T]) => string)(payload)
}
