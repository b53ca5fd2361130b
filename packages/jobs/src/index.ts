export * from './lock'
export * from './queues'
