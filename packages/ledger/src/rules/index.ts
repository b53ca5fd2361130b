import { bridged } from './bridged'
import { depositDetected } from './deposit_detected'
import { fundingPaid } from './funding_paid'
import { gasSpent } from './gas_spent'
import { interestAccrued } from './interest_accrued'
import { depositSwept, signalReceived, stopCleared, stopRaised, swapReverted, tradeRejected } from './no_postings'
import { optionSettled } from './option_settled'
import { optionSold } from './option_sold'
import { reconciliationAdjustment } from './reconciliation_adjustment'
import { subaccountFunded } from './subaccount_funded'
import { subaccountReleased } from './subaccount_released'
import { swapExecuted } from './swap_executed'
import type { PostingRule, PostingRules } from './types'
import { withdrawalGasCharged } from './withdrawal_gas_charged'
import { withdrawalSent } from './withdrawal_sent'

export type { Posting, PostingRule, PostingRules } from './types'

/** The posting rule of every event type (docs/ledger.md has the table). */
export const POSTING_RULES = {
  deposit_detected: depositDetected,
  deposit_swept: depositSwept,
  bridged,
  subaccount_funded: subaccountFunded,
  subaccount_released: subaccountReleased,
  option_sold: optionSold,
  option_settled: optionSettled,
  swap_executed: swapExecuted,
  swap_reverted: swapReverted,
  interest_accrued: interestAccrued,
  funding_paid: fundingPaid,
  withdrawal_sent: withdrawalSent,
  gas_spent: gasSpent,
  trade_rejected: tradeRejected,
  signal_received: signalReceived,
  reconciliation_adjustment: reconciliationAdjustment,
  stop_raised: stopRaised,
  stop_cleared: stopCleared,
  withdrawal_gas_charged: withdrawalGasCharged,
} as const satisfies { [T in keyof PostingRules]-?: PostingRule<T> }
