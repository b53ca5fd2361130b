/**
 * @wh/api-schemas: the TypeBox schemas of every API route, one module per controller. The API
 * validates and documents with them (GET /docs/json); @wh/client derives its types from them, so
 * a shape is written once. Import a controller's module by subpath (`@wh/api-schemas/positions`)
 * or all of them as namespaces from here.
 *
 * Pure: only typebox and constants of the domain packages. The client imports types only
 * (`import type`), so nothing of those packages reaches a browser bundle.
 */
export * as accountWs from './account-ws'
export * as auth from './auth'
export * as decisions from './decisions'
export * as errors from './errors'
export * as health from './health'
export * as liabilities from './liabilities'
export * as market from './market'
export * as portfolio from './portfolio'
export * as positions from './positions'
export * as quotes from './quotes'
export * as signals from './signals'
export * as solvency from './solvency'
export * as strategies from './strategies'
export * as subaccounts from './subaccounts'
export * as trading from './trading'
export * as treasury from './treasury'
export * as wheels from './wheels'
export * as withdrawals from './withdrawals'
export * as ws from './ws'
