export * from './nonces'
export * from './users'
