export { encodeApprove } from './approve-call'
export {
  DERIVE_APPROVE_AT_LEAST_BASE_UNITS,
  DERIVE_APPROVE_STEP,
  DERIVE_DEPOSIT_STEP,
  DERIVE_FEE_MARGIN_BPS,
  DERIVE_MAX_MESSAGE_FEE_WEI,
  DERIVE_MSG_GAS_LIMIT,
  DeriveBridgeAdapter,
  type DeriveBridgeOptions,
  encodeDeriveDeposit,
  messageFeeWithMargin,
  socketVaultAbi,
} from './derive'
export { DERIVE_CHAIN_ID, DERIVE_USDC_ROUTES, type DeriveRouteTable, type DeriveUsdcRoute } from './derive-routes'
export {
  DeriveV3DepositAdapter,
  type DeriveV3DepositOptions,
  encodeV3Deposit,
  V3_APPROVE_AT_LEAST_BASE_UNITS,
  WITHDRAWAL_PAID_EVENT,
} from './derive-v3'
export { LocalBridgeAdapter, type LocalBridgeOptions, SIM_CONTROL_TIMEOUT_MS } from './local'
export * from './types'
