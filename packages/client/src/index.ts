export * from './token-store'
