export * from './queues'
