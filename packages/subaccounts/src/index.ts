/** @wh/subaccounts: the users' subaccounts at the exchange; today the owner of their releases (docs/exchange.md). */
export * from './releases'
