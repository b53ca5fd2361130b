export { DERIVE_BRIDGE_UNVERIFIED, DeriveBridgeAdapter, socketVaultAbi } from './derive'
export { LocalBridgeAdapter, type LocalBridgeOptions, SIM_CONTROL_TIMEOUT_MS } from './local'
export * from './types'
