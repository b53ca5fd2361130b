/**
 * ABI layouts of the module data each action signs (derivexyz/v2-matching interfaces):
 * TradeModule.TradeData, DepositModule.DepositData, WithdrawalModule.WithdrawalData,
 * TransferModule.TransferData. Prices, trade amounts, fees and transfer amounts are e18;
 * deposit and withdrawal amounts are in the token's own decimals.
 */
import { type Address, encodeAbiParameters, getAddress, type Hex } from 'viem'

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

/** DepositData(uint amount, address asset, address managerForNewAccount); amount in token decimals. */
export function encodeDepositData(amountUnits: bigint, asset: Address, manager: Address): Hex {
  return encodeAbiParameters(
    [{ type: 'uint256' }, { type: 'address' }, { type: 'address' }],
    [amountUnits, getAddress(asset), getAddress(manager)],
  )
}

/** WithdrawalData(address asset, uint assetAmount); amount in token decimals. */
export function encodeWithdrawalData(asset: Address, amountUnits: bigint): Hex {
  return encodeAbiParameters([{ type: 'address' }, { type: 'uint256' }], [getAddress(asset), amountUnits])
}

export interface TransferLine {
  asset: Address
  subId: bigint
  amountE18: bigint
}

/** TransferData(uint toAccountId, address managerForNewAccount, (address asset, uint subId, int amount)[] transfers) */
export function encodeTransferData(toSubaccountId: bigint, manager: Address, transfers: TransferLine[]): Hex {
  return encodeAbiParameters(
    [
      {
        type: 'tuple',
        components: [
          { type: 'uint256' },
          { type: 'address' },
          {
            type: 'tuple[]',
            components: [{ type: 'address' }, { type: 'uint256' }, { type: 'int256' }],
          },
        ],
      },
    ],
    [[toSubaccountId, getAddress(manager), transfers.map((t) => [getAddress(t.asset), t.subId, t.amountE18] as const)]],
  )
}

/** The recipient side of a transfer signs empty module data. */
export const EMPTY_MODULE_DATA: Hex = '0x'

export const ZERO_ADDRESS: Address = '0x0000000000000000000000000000000000000000'
