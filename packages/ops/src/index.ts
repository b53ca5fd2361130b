/**
 * The operator's desk (docs/operations.md): what an operator may decide on the money path, each
 * decision recorded in `operator_actions` with who and why. The worker's CLIs (apps/worker/src/cli)
 * and the API's admin listener (apps/api/src/admin) call these same functions.
 */
export * from './actions'
export * from './chain-halt'
export * from './held'
export * from './platform-stop'
export * from './subaccount-stops'
