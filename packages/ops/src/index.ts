/**
 * The operator's desk (docs/operations.md): who the operators are and what they may decide on the
 * money path, each decision recorded in `operator_actions` with who and why; the decisions that
 * release money take four eyes (proposals). The worker's CLIs (apps/worker/src/cli) and the API's
 * admin listener (apps/api/src/admin) call these same functions.
 */
export * from './actions'
export * from './capital'
export * from './chain-halt'
export * from './held'
export * from './operators'
export * from './platform-stop'
export type { ActionDeps } from './proposal-actions'
export * from './proposals'
export * from './subaccount-stops'
