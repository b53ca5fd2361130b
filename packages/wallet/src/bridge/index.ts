export {
  advanceLegs,
  encodeApprove,
  type LegsStatus,
  legsStatus,
  type TwoLegPurpose,
  type TwoLegs,
} from './approve-call'
export {
  DeriveV3DepositAdapter,
  type DeriveV3DepositOptions,
  encodeV3Deposit,
  V3_APPROVE_AT_LEAST_BASE_UNITS,
  WITHDRAWAL_DIVERTED_EVENT,
  WITHDRAWAL_ENQUEUED_EVENT,
  WITHDRAWAL_PAID_EVENT,
  WITHDRAWAL_SKIPPED_EVENT,
} from './derive-v3'
export * from './types'
