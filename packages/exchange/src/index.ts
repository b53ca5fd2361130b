/**
 * @wh/exchange: the Derive client and Derive's protocol (signing, module data, nonces, auth, the v3 wire
 * types). The simulator is a program of its own (tools/derive-simulator); nothing here imports it.
 */
export * from './client/derive-client'
export * from './client/errors'
export * from './client/http-transport'
export * from './client/logger'
export * from './client/retry'
export * from './client/ws-client'
export * from './protocol/action'
export * from './protocol/auth'
export * from './protocol/auth-message'
export * from './protocol/constants'
export * from './protocol/decimal'
export * from './protocol/fee-schedule'
export * from './protocol/instrument-name'
export * from './protocol/module-data'
export * from './protocol/nonce'
export * from './protocol/rpc-codes'
export type * from './protocol/types'
export { V3_METHODS } from './v3/codegen'
export { type PublicReader, publicReader } from './v3/public'
export type * as V3Wire from './v3/wire.gen'
