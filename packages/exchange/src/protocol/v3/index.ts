/** Derive v3 signing: domain, actions, module data, nonces, session login (docs/exchange-v3.md). */
export * from './action'
export * from './auth'
export * from './constants'
export * from './module-data'
export * from './nonce'
