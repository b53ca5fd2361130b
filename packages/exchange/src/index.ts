/** @wh/exchange: the Derive client and the Derive simulator. */
export * from './client/derive-client'
export * from './client/errors'
export * from './client/http-transport'
export * from './client/logger'
export * from './client/retry'
export * from './client/ws-client'
export * from './protocol/action'
export * from './protocol/auth'
export * from './protocol/auth-message'
export * from './protocol/constants'
export * from './protocol/decimal'
export * from './protocol/fee-schedule'
export * from './protocol/instrument-name'
export * from './protocol/module-data'
export * from './protocol/nonce'
export * from './protocol/rpc-codes'
export type * from './protocol/types'
export type { SimControl } from './simulator/control'
export {
  L1_ACTION,
  type L1DepositWatcher,
  type L1DepositWatchOptions,
  PUBLIC_ACTION_QUEUED,
  watchL1Deposits,
} from './simulator/l1-deposits'
export {
  attachL1Payer,
  type L1Payer,
  type L1PayerOptions,
  outboxIdOf,
  WITHDRAWAL_OUTBOX_ABI,
  whitelistRecipient,
} from './simulator/l1-withdrawals'
export { type RunningSimulator, type SimulatorOptions, startDeriveSimulator } from './simulator/server'
export { type PublicReader, publicReader } from './v3/public'
