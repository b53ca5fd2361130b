/** @wh/trading: the trading parameter sets and the signal protocol, shared by the api and the worker. */

export * from './conversions'
export * from './decisions'
export * from './economics'
export * from './placing'
export * from './positions'
export * from './profiles'
export * from './quotes'
export * from './signal-state'
export * from './signals'
export * from './wheel'
export * from './wheel-cycles'
export * from './wheel-settings'
