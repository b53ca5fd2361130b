export * from './lock'
export * from './metrics-keys'
export * from './queues'
export * from './retry'
