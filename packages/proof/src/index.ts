export * from './tree'
