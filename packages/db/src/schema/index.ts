export * from './ledger'
export * from './nonces'
export * from './users'
