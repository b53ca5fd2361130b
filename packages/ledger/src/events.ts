/**
 * spec 6: the 18 event types of the journal, spelled as the spec spells them, and this service's
 * extensions after them (docs/contract.md section 6): `withdrawal_gas_charged`, the gas of a
 * withdrawal that failed on chain charged to its user (docs/ledger.md).
 */
export const EVENT_TYPES = [
  'deposit_detected',
  'deposit_swept',
  'bridged',
  'subaccount_funded',
  'subaccount_released',
  'option_sold',
  'option_settled',
  'swap_executed',
  'swap_reverted',
  'interest_accrued',
  'funding_paid',
  'withdrawal_sent',
  'gas_spent',
  'trade_rejected',
  'signal_received',
  'reconciliation_adjustment',
  'stop_raised',
  'stop_cleared',
  'withdrawal_gas_charged',
] as const

export type EventType = (typeof EVENT_TYPES)[number]

export function isEventType(value: string): value is EventType {
  return (EVENT_TYPES as readonly string[]).includes(value)
}

/**
 * Authorizing events spend the user's free balance on the user's behalf, so the append checks the
 * free balance in the same transaction and refuses when it would go negative. Every other type
 * records a fact that already happened on a chain or at the exchange, and always posts: refusing
 * a fact would only make the journal lie. (A withdrawal request is authorized by reserveWithdrawal,
 * it is not an event.)
 */
export const AUTHORIZING_EVENT_TYPES: ReadonlySet<EventType> = new Set<EventType>(['subaccount_funded'])
