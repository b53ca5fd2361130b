/** @wh/trading: the trading parameter sets and the signal protocol, shared by the api and the worker. */

export * from './account-events'
export * from './conversions'
export * from './placing'
export * from './positions'
export * from './profiles'
export * from './signals'
export * from './wheel'
