export * from './errors'
export * from './sign-in'
export * from './token-store'
