/** @wh/ledger: the journal of spec 6 posted to the accounts of spec 2.4. docs/ledger.md explains it. */
export * from './accounts'
export * from './balance-check'
export * from './balances'
export * from './errors'
export { eventKey } from './event-keys'
export * from './events'
export {
  type AppendOptions,
  type AppendResult,
  append,
  appendBatch,
  type EventInput,
  type JournalEvent,
  MAX_BATCH_EVENTS,
  PLATFORM_BALANCE_SLOTS,
  recordedKeys,
} from './journal'
export * from './keys'
export { PAYLOAD_SCHEMAS, type Payloads } from './payloads'
export { InvalidPeriodError, type Period } from './period'
export { netPostings } from './postings'
export * from './reserve'
export { POSTING_RULES, type Posting, type PostingRule, type PostingRules } from './rules'
export type { Queryable } from './sql'
export * from './statement'
export * from './summary'
