/** The simulator's in-memory state. Every amount and price is an e18 bigint. */

import type { Direction, OrderStatus, ProtocolScope, TxStatus } from '@wh/exchange'
import type { Address, Hex } from 'viem'
import type { CollateralName, Underlying } from './assets'

export interface SimInstrument {
  name: string
  type: 'option' | 'perp' | 'erc20'
  currency: Underlying
  assetAddress: Address
  subId: bigint
  tickE18: bigint
  amountStepE18: bigint
  minAmountE18: bigint
  maxAmountE18: bigint
  makerFeeRateE18: bigint
  takerFeeRateE18: bigint
  baseFeeE18: bigint
  /** Options: fees are capped at this fraction of the option's value. */
  feeCapRateE18: bigint | null
  option: { expirySec: number; strikeE18: bigint; type: 'C' | 'P'; settlementPriceE18: bigint | null } | null
}

/** A session key of an account (session-keys.ts keeps the rules). */
export interface SimSessionKey {
  address: Address
  /** unix seconds: the key works while now < expirySec */
  expirySec: number
  scopes: ProtocolScope[]
  /** the subaccounts the key may act on; empty: all of the account's, current and future */
  subaccountIds: number[]
  offchainScopes: string[]
  label: string
  ipWhitelist: string[]
  registeredSec: number
}

export interface SimWallet {
  wallet: Address
  owner: Address
  /** lower-cased address → the key (session-keys.ts) */
  sessionKeys: Map<string, SimSessionKey>
  /** lower-cased recipients the account's session keys may pay (private/update_whitelisted_recipients) */
  whitelist: Set<string>
  /** On-chain balances of the account (control.fundWallet); an L1 withdrawal to the owner pays into them. */
  walletBalances: Map<CollateralName, bigint>
  /** the subaccount that catches deposits that cannot be applied (opened by the account's first L1 deposit) */
  fallbackSubaccountId?: number
}

export interface SimPosition {
  amountE18: bigint
  averagePriceE18: bigint
  cumulativeFundingE18: bigint
  realizedPnlE18: bigint
  createdMs: number
}

export interface SimSubaccount {
  id: number
  wallet: Address
  label: string
  marginType: 'SM' | 'PM' | 'PM2'
  balances: Map<CollateralName, bigint>
  cumulativeInterestE18: bigint
  positions: Map<string, SimPosition>
  usedNonces: Set<string>
}

export interface SimOrder {
  orderId: string
  subaccountId: number
  instrument: string
  direction: Direction
  amountE18: bigint
  filledE18: bigint
  limitPriceE18: bigint
  maxFeeE18: bigint
  feeE18: bigint
  notionalFilledE18: bigint
  status: OrderStatus
  timeInForce: 'gtc' | 'post_only' | 'fok' | 'ioc'
  cancelReason: string
  label: string
  mmp: boolean
  nonce: string
  signer: Address
  signature: Hex
  expirySec: number
  createdMs: number
  updatedMs: number
}

export interface SimTrade {
  tradeId: string
  orderId: string
  subaccountId: number
  instrument: string
  direction: Direction
  amountE18: bigint
  priceE18: bigint
  feeE18: bigint
  role: 'maker' | 'taker'
  indexE18: bigint
  markE18: bigint
  timestampMs: number
  transactionId: string
  label: string
}

export interface SimTransaction {
  id: string
  status: TxStatus
  kind: 'deposit' | 'withdrawal' | 'transfer' | 'account'
  data: Record<string, unknown>
}

export interface CashEvent {
  subaccountId: number
  timestampMs: number
}

export interface DepositRecord extends CashEvent {
  asset: CollateralName
  amountE18: bigint
  transactionId: string
  txHash: Hex
  /** the deposit created the subaccount (an L1 `depositToNewSubaccount`) */
  newSubaccount?: boolean
}

export interface WithdrawalRecord extends CashEvent {
  asset: CollateralName
  amountE18: bigint
  txHash: Hex
  /** the operation (v3's op_uuid) */
  transactionId: string
  /** the L1 payout address */
  recipient?: Address
  /** the fee taken in kind (e18 of the asset); the recipient is paid the amount less it */
  feeE18?: bigint
}

/** One side of a transfer: the sender's row holds the gross amount and the fee, the receiver's the net. */
export interface TransferRecord extends CashEvent {
  asset: CollateralName
  amountE18: bigint
  /** taken in kind from the amount (v3 charges creating a subaccount); 0 on the receiver's row */
  feeE18: bigint
  counterparty: number
  outgoing: boolean
  txHash: Hex
  /** the operation (v3's op_uuid), the same on both rows */
  transactionId: string
}

export interface InterestRecord extends CashEvent {
  interestE18: bigint
}

export interface FundingRecord extends CashEvent {
  instrument: string
  fundingE18: bigint
}

export interface SettlementRecord extends CashEvent {
  instrument: string
  expirySec: number
  amountE18: bigint
  settlementPriceE18: bigint
  pnlE18: bigint
}

export interface SimHistories {
  deposits: DepositRecord[]
  withdrawals: WithdrawalRecord[]
  transfers: TransferRecord[]
  interest: InterestRecord[]
  funding: FundingRecord[]
  settlements: SettlementRecord[]
  trades: SimTrade[]
}
