/**
 * @wh/subaccounts: the users' subaccounts at the exchange (docs/exchange.md), the one owner of
 * `subaccounts`, `subaccount_transfers` and `subaccount_releases` writes (docs/architecture.md
 * "Table owners"), and what moves money between them and the platform's exchange wallet: funding
 * (funding/), releases (release/), the platform's fee collection (fees/), accruals (accruals/) and
 * reconciliation (reconcile/), each under the exchange cycle lock (cycle-lock.ts); and the start-up
 * checks of the exchange account: its session keys (session-keys/) and Derive's L1 contracts (contracts/).
 * The worker's ticks call these; their schedules stay in apps/worker.
 */

export * from './accounting'
export * from './accruals/accruals'
export * from './accruals/buckets'
export * from './contracts/check'
export * from './cycle-lock'
export * from './fees/collect'
export * from './funding/fund'
export * from './funding/top-up'
export * from './movements'
export * from './reconcile/funding-subaccount'
export * from './reconcile/reconcile'
export * from './reconcile/sources'
export * from './release/release'
export * from './releases'
export * from './session-keys/check'
export * from './session-keys/lifecycle'
export * from './subaccounts'
export * from './transfers'
