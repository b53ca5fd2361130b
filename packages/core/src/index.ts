export * from './assets'
export * from './clock'
export * from './errors'
export * from './money'
