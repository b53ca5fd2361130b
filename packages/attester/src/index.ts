export * from './attester'
