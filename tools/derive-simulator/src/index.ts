/**
 * @wh/derive-simulator: a stand-in for Derive's v3 exchange that speaks its wire, for tests and the
 * local run (docs/exchange.md "Simulator"). Development only: no production source imports it
 * (test/architecture.test.ts).
 */
export type { SessionKeyGrant, SimControl } from './control'
export {
  L1_ACTION,
  type L1DepositWatcher,
  type L1DepositWatchOptions,
  PUBLIC_ACTION_QUEUED,
  watchL1Deposits,
} from './l1-deposits'
export {
  attachL1Payer,
  type L1Payer,
  type L1PayerOptions,
  outboxIdOf,
  WITHDRAWAL_OUTBOX_ABI,
} from './l1-withdrawals'
export { type RunningSimulator, type SimulatorOptions, startDeriveSimulator } from './server'
export { CONTROL_DEFAULT_KEY, type SimSessionKey, whitelistRecipient } from './session-keys'
