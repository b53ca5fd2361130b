/**
 * v3 module data: the canonical Solidity ABI encoding of each action's data (docs/exchange-v3.md,
 * "Module data"). Amounts, prices and fees are e18 bigints except the withdrawal amount, which is
 * in the token's native decimals (it is the L1 payout). Derive holds decimals at 1e12 and rejects,
 * rather than truncates, e18 words with finer precision, so the encoders refuse them too.
 */
import { type Address, encodeAbiParameters, encodeFunctionData, getAddress, type Hex } from 'viem'

export interface TradeData {
  asset: Address
  subId: bigint
  limitPriceE18: bigint
  amountE18: bigint
  maxFeeE18: bigint
  recipientId: bigint
  isBid: boolean
}

/** TradeData(address asset, uint subId, int limitPrice, int desiredAmount, uint worstFee, uint recipientId, bool isBid) */
export function encodeTradeData(t: TradeData): Hex {
  return encodeAbiParameters(
    [
      { type: 'address' },
      { type: 'uint256' },
      { type: 'int256' },
      { type: 'int256' },
      { type: 'uint256' },
      { type: 'uint256' },
      { type: 'bool' },
    ],
    [getAddress(t.asset), t.subId, t.limitPriceE18, t.amountE18, t.maxFeeE18, t.recipientId, t.isBid],
  )
}

const E12_STEP = 1_000_000n
const I128_MIN = -(2n ** 127n)
const I128_MAX = 2n ** 127n - 1n
const U64_MAX = 2n ** 64n - 1n
const U128_MAX = 2n ** 128n - 1n

function check(ok: boolean, message: string): void {
  if (!ok) throw new RangeError(message)
}

function e12Precise(v: bigint, field: string): bigint {
  check(v % E12_STEP === 0n, `${field} has more than 12 decimal places`)
  return v
}

/**
 * A ceiling (an order's max fee) rounded up to the 12 places v3 takes: a cap finer than that is
 * refused, and rounding it up by less than 10^-12 keeps what it caps.
 */
export function ceilToE12(e18: bigint): bigint {
  const rest = ((e18 % E12_STEP) + E12_STEP) % E12_STEP
  return rest === 0n ? e18 : e18 - rest + E12_STEP
}

function unsignedE18(v: bigint, field: string): bigint {
  check(v >= 0n && v <= U128_MAX, `${field} must be a non-negative u128`)
  return e12Precise(v, field)
}

function id64(v: bigint, field: string): bigint {
  check(v >= 0n && v <= U64_MAX, `${field} must be a u64`)
  return v
}

/** Order (trade module): the v2 layout, seven static words, with the v3 exchange's range and precision limits. */
export function encodeTradeDataV3(t: TradeData): Hex {
  for (const [field, v] of [
    ['limitPrice', t.limitPriceE18],
    ['amount', t.amountE18],
  ] as const) {
    check(v >= I128_MIN && v <= I128_MAX, `${field} must fit an i128`)
    e12Precise(v, field)
  }
  unsignedE18(t.maxFeeE18, 'maxFee')
  id64(t.recipientId, 'recipientId')
  check(t.subId >= 0n && t.subId <= U128_MAX, 'subId must be a u128')
  return encodeTradeData(t)
}

export interface TransferSpotData {
  /** Existing destination subaccount; ignored when `newSubaccountManager` is non-zero. */
  toSubaccountId: bigint
  /** 0 credits `toSubaccountId`; non-zero creates a new subaccount under this manager id. */
  newSubaccountManager: bigint
  /** The protocol spot asset (not the underlying ERC-20). */
  asset: Address
  subId: bigint
  amountE18: bigint
  maxFeeUsdE18: bigint
}

function transferWords(t: TransferSpotData) {
  check(t.amountE18 > 0n, 'transfer amount must be positive')
  check(t.subId >= 0n, 'subId must be non-negative')
  return [
    id64(t.toSubaccountId, 'toSubaccountId'),
    id64(t.newSubaccountManager, 'newSubaccountManager'),
    getAddress(t.asset),
    t.subId,
    unsignedE18(t.amountE18, 'amount'),
    unsignedE18(t.maxFeeUsdE18, 'maxFeeUsd'),
  ] as const
}

const TRANSFER_TYPES = [
  { type: 'uint256' },
  { type: 'uint256' },
  { type: 'address' },
  { type: 'uint256' },
  { type: 'uint256' },
  { type: 'uint256' },
] as const

/** private/transfer_spot (transfer module): six static words. */
export function encodeTransferSpot(t: TransferSpotData): Hex {
  return encodeAbiParameters(TRANSFER_TYPES, transferWords(t))
}

/** private/transfer_spot_external (external-transfer module): the six transfer words plus the recipient owner. */
export function encodeTransferSpotExternal(t: TransferSpotData & { recipient: Address }): Hex {
  return encodeAbiParameters([...TRANSFER_TYPES, { type: 'address' }], [...transferWords(t), getAddress(t.recipient)])
}

export interface WithdrawalDataV3 {
  /** The protocol spot asset (not the underlying ERC-20). */
  asset: Address
  maxFeeUsdE18: bigint
  /** L1 payout address. */
  recipient: Address
  /** In the underlying token's native decimals (USDC: 6), not e18. */
  amountUnits: bigint
  forceBatch: boolean
}

/** private/withdraw (withdrawal module): (address asset, uint256 maxFeeUsd, address recipient, uint256 amount, bool forceBatch). */
export function encodeWithdrawalDataV3(w: WithdrawalDataV3): Hex {
  check(w.amountUnits > 0n, 'withdrawal amount must be positive')
  return encodeAbiParameters(
    [{ type: 'address' }, { type: 'uint256' }, { type: 'address' }, { type: 'uint256' }, { type: 'bool' }],
    [
      getAddress(w.asset),
      unsignedE18(w.maxFeeUsdE18, 'maxFeeUsd'),
      getAddress(w.recipient),
      w.amountUnits,
      w.forceBatch,
    ],
  )
}

export interface SessionKeyData {
  sessionKey: Address
  /** The key's own lifetime (unix seconds), distinct from the signature expiry. */
  expirySec: bigint
  /** Protocol scope codes (PROTOCOL_SCOPES). */
  scopes: readonly number[]
  /** Subaccounts the key may act on; empty = all current and future ones. */
  subaccountIds: readonly bigint[]
}

/** private/set_session_key (set-session-key module, signed against subaccount 0): (address, uint256, uint256[], uint256[]). */
export function encodeSessionKeyData(k: SessionKeyData): Hex {
  check(k.expirySec >= 0n, 'expirySec must be non-negative')
  for (const s of k.scopes) check(Number.isInteger(s) && s >= 0, 'scope codes are non-negative integers')
  return encodeAbiParameters(
    [{ type: 'address' }, { type: 'uint256' }, { type: 'uint256[]' }, { type: 'uint256[]' }],
    [
      getAddress(k.sessionKey),
      k.expirySec,
      k.scopes.map((s) => BigInt(s)),
      k.subaccountIds.map((id) => id64(id, 'subaccountId')),
    ],
  )
}

/** private/update_whitelisted_recipients: (address[] add, address[] remove). */
export function encodeWhitelistedRecipients(add: readonly Address[], remove: readonly Address[]): Hex {
  return encodeAbiParameters(
    [{ type: 'address[]' }, { type: 'address[]' }],
    [add.map((a) => getAddress(a)), remove.map((a) => getAddress(a))],
  )
}

/**
 * The OnchainActionManager entry points the service calls on Ethereum L1 (verified ABI of the Sepolia implementation),
 * kept here only: the bridge's deposit (@wh/wallet), the owner's L1 session-key action (owner-actions.ts) and the
 * worker's check at start read them from this one definition (docs/exchange-v3.md "Contracts").
 */
export const ONCHAIN_ACTION_MANAGER_ABI = [
  {
    type: 'function',
    name: 'deposit',
    stateMutability: 'nonpayable',
    inputs: [
      { name: 'asset', type: 'address' },
      { name: 'amount', type: 'uint256' },
      { name: 'subaccountId', type: 'uint64' },
      { name: 'fallbackRecipient', type: 'address' },
    ],
    outputs: [{ name: 'actionId', type: 'uint256' }],
  },
  {
    type: 'function',
    name: 'depositToNewSubaccount',
    stateMutability: 'nonpayable',
    inputs: [
      { name: 'asset', type: 'address' },
      { name: 'amount', type: 'uint256' },
      { name: 'managerId', type: 'uint32' },
      { name: 'owner', type: 'address' },
    ],
    outputs: [{ name: 'actionId', type: 'uint256' }],
  },
  {
    type: 'function',
    name: 'submit',
    stateMutability: 'payable',
    inputs: [
      { name: 'actionType', type: 'uint256' },
      { name: 'data', type: 'bytes' },
    ],
    outputs: [{ name: 'actionId', type: 'uint256' }],
  },
  {
    type: 'function',
    name: 'publicHeadIndex',
    stateMutability: 'view',
    inputs: [],
    outputs: [{ name: '', type: 'uint256' }],
  },
] as const

/** Calldata of `deposit`: credits an existing subaccount; `amountUnits` in the token's native decimals. */
export function encodeDepositCall(asset: Address, amountUnits: bigint, subaccountId: bigint, fallback: Address): Hex {
  check(amountUnits > 0n, 'deposit amount must be positive')
  return encodeFunctionData({
    abi: ONCHAIN_ACTION_MANAGER_ABI,
    functionName: 'deposit',
    args: [getAddress(asset), amountUnits, id64(subaccountId, 'subaccountId'), getAddress(fallback)],
  })
}

/** Calldata of `depositToNewSubaccount`: the first deposit of a wallet creates its account and subaccount. */
export function encodeDepositToNewSubaccountCall(
  asset: Address,
  amountUnits: bigint,
  managerId: number,
  owner: Address,
): Hex {
  check(amountUnits > 0n, 'deposit amount must be positive')
  check(Number.isInteger(managerId) && managerId > 0 && managerId < 2 ** 32, 'managerId must be a non-zero u32')
  return encodeFunctionData({
    abi: ONCHAIN_ACTION_MANAGER_ABI,
    functionName: 'depositToNewSubaccount',
    args: [getAddress(asset), amountUnits, managerId, getAddress(owner)],
  })
}
