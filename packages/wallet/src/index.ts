export * from './chains'
export * from './hd'
export { Lru } from './lru'
