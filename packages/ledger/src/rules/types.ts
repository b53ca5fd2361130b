import type { AccountName } from '../accounts'
import type { EventType } from '../events'
import type { Payloads } from '../payloads'

/** One leg of an event: a signed amount in base units of `currency` (spec 2.4: no debit/credit columns). */
export interface Posting {
  readonly account: AccountName
  readonly currency: string
  readonly amount: bigint
}

/** The postings of one event, from its payload; pure, so it can be tested without a database. */
export type PostingRule<T extends EventType> = (payload: Payloads[T]) => readonly Posting[]

export type PostingRules = { readonly [T in EventType]?: PostingRule<T> }

/**
 * `amount` leaves `from` and arrives at `to`. Sign convention: an account's balance is what flowed
 * into it, so holdings and expenses grow positive and sources (external, income) grow negative.
 */
export function move(from: AccountName, to: AccountName, currency: string, amount: bigint): Posting[] {
  return [
    { account: from, currency, amount: -amount },
    { account: to, currency, amount },
  ]
}
