/**
 * @wh/subaccounts: the users' subaccounts at the exchange (docs/exchange.md), the one owner of
 * `subaccounts`, `subaccount_transfers` and `subaccount_releases` writes (docs/architecture.md
 * "Table owners").
 */

export * from './accounting'
export * from './cycle-lock'
export * from './movements'
export * from './releases'
export * from './subaccounts'
export * from './transfers'
