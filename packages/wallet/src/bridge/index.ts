export { encodeApprove } from './approve-call'
export {
  DeriveV3DepositAdapter,
  type DeriveV3DepositOptions,
  encodeV3Deposit,
  V3_APPROVE_AT_LEAST_BASE_UNITS,
  WITHDRAWAL_PAID_EVENT,
} from './derive-v3'
export * from './types'
