export * from './context'
export * from './database'
export * from './env'
export * from './processes'
