export * from './constants'
export * from './env'
export * from './process-env'
export * from './xpub'
