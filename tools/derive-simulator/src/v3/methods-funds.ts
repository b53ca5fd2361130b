/**
 * v3 money movements on the simulator's engine: `private/transfer_spot` (between the owner's
 * subaccounts, or into a new one under a manager) through the engine's collateral move
 * (../accounts.ts), and `private/withdraw` (an L1 payout; the account's on-chain balance stands in
 * for the recipient). Creating a subaccount costs `engine.subaccountCreationFeeE18` (USD, 0 by
 * default), taken in kind; a `max_fee_usd` below it is accepted and the operation then fails in
 * its batch, as derive-ts describes ("ACKed then rejected asynchronously").
 */

import type { V3Wire as W } from '@wh/exchange'
import { divE18, encodeTransferSpot, encodeWithdrawalDataV3, RPC, toE18, toUnits, V3_MODULES } from '@wh/exchange'
import type { Address } from 'viem'
import { debitFreeCollateral, moveCollateral, newSubaccount, txRecord } from '../accounts'
import { COLLATERALS, type CollateralName, isCollateralName } from '../assets'
import type { SimEngine } from '../engine'
import { type Ctx, check, type Handler, ownSubaccount, requireWallet } from '../handler'
import { l1WithdrawalFee, queueL1Payout } from '../l1-withdrawals'
import { rpcErr, SimRpcError } from '../rpc-error'
import { mayPay, requireScope } from '../session-keys'
import type { SimSubaccount } from '../sim-types'
import { V3TransferSpotParams, V3WithdrawParams } from './params'
import { verifyV3Action } from './verify'
import { SIM_SM_MANAGER_ID } from './views'

/** A decimal the v3 encoders accept (at most 12 places, else Derive's invalid params). */
export function e18(value: string, field: string): bigint {
  try {
    return toE18(value)
  } catch {
    throw rpcErr.params(`${field} is not a decimal`)
  }
}

export function encoded<T>(encode: () => T): T {
  try {
    return encode()
  } catch (err) {
    throw rpcErr.params(err instanceof Error ? err.message : String(err))
  }
}

function collateralOf(name: string) {
  if (!isCollateralName(name)) throw rpcErr.asset(name)
  return COLLATERALS[name]
}

/** The creation fee in units of the moved asset (USD at the index; USDC at 1). */
function creationFeeIn(engine: SimEngine, asset: CollateralName): bigint {
  const usd = engine.subaccountCreationFeeE18
  return usd === 0n || asset === 'USDC' ? usd : divE18(usd, engine.market.indexE18(asset))
}

/** The destination of a transfer_spot: an own subaccount, or (a manager id given) one still to create. */
function destinationOf(ctx: Ctx, p: V3TransferSpotParams, from: SimSubaccount): SimSubaccount | 'new' {
  if (p.new_subaccount_manager !== 0) {
    if (p.new_subaccount_manager !== SIM_SM_MANAGER_ID)
      throw rpcErr.params(`unknown manager id ${p.new_subaccount_manager}`)
    return 'new'
  }
  const to = ownSubaccount(ctx, p.to_subaccount_id)
  if (to.id === from.id) throw new SimRpcError(10003, 'Sender and recipient subaccount IDs are the same', null)
  return to
}

const transferSpot: Handler = async (ctx, raw): Promise<W.PrivateTransferSpotResponse> => {
  const w = requireWallet(ctx)
  const p = check<V3TransferSpotParams>(V3TransferSpotParams, raw)
  const from = ownSubaccount(ctx, p.subaccount_id)
  const asset = collateralOf(p.asset_name)
  const amountE18 = e18(p.amount, 'amount')
  if (amountE18 <= 0n) throw new SimRpcError(RPC.INVALID_AMOUNT, 'Invalid amount', 'amount must be positive')
  const maxFeeUsdE18 = e18(p.max_fee_usd, 'max_fee_usd')
  const data = encoded(() =>
    encodeTransferSpot({
      toSubaccountId: BigInt(p.to_subaccount_id),
      newSubaccountManager: BigInt(p.new_subaccount_manager),
      asset: asset.address,
      subId: BigInt(p.sub_id),
      amountE18,
      maxFeeUsdE18,
    }),
  )
  const to = destinationOf(ctx, p, from)
  // creating a subaccount needs transfer:new_subaccount, moving between existing ones transfer:existing_subaccount
  const scope = to === 'new' ? 'transfer:new_subaccount' : 'transfer:existing_subaccount'
  const action = {
    kind: 'transfer' as const,
    subaccountId: BigInt(from.id),
    nonce: BigInt(p.nonce),
    module: V3_MODULES.transfer,
    data,
    expirySec: BigInt(p.signature_expiry_sec),
    signer: p.signer,
    signature: p.signature,
  }
  await verifyV3Action(ctx.engine, w, from, action, (s) => requireScope(s, scope, from.id))
  const operation_id = ctx.engine.transactions.size + 1
  if (to === 'new' && ctx.engine.subaccountCreationFeeE18 > maxFeeUsdE18) {
    const failed = txRecord(ctx.engine, 'transfer', { from: from.id, error: 'max_fee_usd below the fee' }, 'reverted')
    return { operation_id, op_uuid: failed.id }
  }
  const feeE18 = to === 'new' ? creationFeeIn(ctx.engine, asset.name) : 0n
  if (feeE18 >= amountE18) throw rpcErr.funds('the amount does not cover the subaccount creation fee')
  // the balance is checked before a subaccount is made, so a refused creation leaves nothing behind
  if ((from.balances.get(asset.name) ?? 0n) < amountE18) throw rpcErr.funds('transfer exceeds free collateral')
  const target = to === 'new' ? newSubaccount(ctx.engine, w.wallet, 'SM') : to
  const tx = moveCollateral(ctx.engine, from, target, asset.name, amountE18, feeE18)
  return { operation_id, op_uuid: tx.id }
}

const withdraw: Handler = async (ctx, raw): Promise<W.PrivateWithdrawResponse> => {
  const w = requireWallet(ctx)
  const p = check<V3WithdrawParams>(V3WithdrawParams, raw)
  const sub = ownSubaccount(ctx, p.subaccount_id)
  const c = collateralOf(p.asset_name)
  let units: bigint
  try {
    units = toUnits(p.amount_in_underlying, c.decimals)
  } catch {
    throw new SimRpcError(RPC.INVALID_AMOUNT, 'Invalid amount', `more than ${c.decimals} decimals`)
  }
  const recipient = (p.recipient ?? w.owner) as Address
  const maxFeeUsdE18 = e18(p.max_fee_usd, 'max_fee_usd')
  const data = encoded(() =>
    encodeWithdrawalDataV3({
      asset: c.address,
      maxFeeUsdE18,
      recipient,
      amountUnits: units,
      forceBatch: p.force_batch,
    }),
  )
  const a = { subaccountId: BigInt(sub.id), nonce: BigInt(p.nonce), module: V3_MODULES.withdrawal, data }
  const signed = { expirySec: BigInt(p.signature_expiry_sec), signer: p.signer, signature: p.signature }
  // a session key needs withdraw for the subaccount, and pays only a whitelisted recipient (the owner
  // included) unless it holds admin (derive-ts src/api/withdrawals.ts; 11033 as derive-ts names it)
  await verifyV3Action(ctx.engine, w, sub, { ...a, ...signed, kind: 'withdraw' }, (s) => {
    requireScope(s, 'withdraw', sub.id)
    if (!mayPay(w, s, recipient))
      throw new SimRpcError(RPC.RECIPIENT_NOT_WHITELISTED, 'Transfer recipient not whitelisted', recipient)
  })
  const isOwner = (x: string) => x.toLowerCase() === w.owner.toLowerCase()
  const amountE18 = toE18(p.amount_in_underlying)
  const fee = l1WithdrawalFee(ctx.engine, c.name)
  if (fee !== undefined)
    return queuedWithdrawal(ctx.engine, { sub, c: c.name, recipient, amountE18, fee, maxFeeUsdE18 })
  debitFreeCollateral(ctx.engine, sub, c.name, amountE18, 'withdrawal')
  if (isOwner(recipient)) w.walletBalances.set(c.name, (w.walletBalances.get(c.name) ?? 0n) + amountE18)
  const tx = txRecord(ctx.engine, 'withdrawal', { subaccount: sub.id, asset_name: c.name, recipient })
  ctx.engine.history.withdrawals.push({
    subaccountId: sub.id,
    timestampMs: ctx.engine.now(),
    asset: c.name,
    amountE18,
    txHash: tx.txHash,
    transactionId: tx.id,
    recipient,
  })
  return { operation_id: ctx.engine.transactions.size, op_uuid: tx.id }
}

/**
 * With an L1 payer attached (../l1-withdrawals.ts): debited now, paid on L1 with the next
 * batch. A fee above `max_fee_usd` is accepted and fails in its batch, nothing debited.
 */
function queuedWithdrawal(
  engine: SimEngine,
  q: {
    sub: SimSubaccount
    c: CollateralName
    recipient: Address
    amountE18: bigint
    fee: { usdE18: bigint; e18: bigint }
    maxFeeUsdE18: bigint
  },
): W.PrivateWithdrawResponse {
  const data = { subaccount: q.sub.id, asset_name: q.c, recipient: q.recipient }
  const refused =
    q.fee.usdE18 > q.maxFeeUsdE18
      ? 'max_fee_usd below the withdrawal fee'
      : q.fee.e18 >= q.amountE18
        ? 'the withdrawal fee takes the whole amount'
        : undefined
  if (refused !== undefined) {
    const failed = txRecord(engine, 'withdrawal', { ...data, error: refused }, 'reverted')
    return { operation_id: engine.transactions.size, op_uuid: failed.id }
  }
  debitFreeCollateral(engine, q.sub, q.c, q.amountE18, 'withdrawal')
  const tx = txRecord(engine, 'withdrawal', data, 'pending')
  queueL1Payout(engine, {
    opUuid: tx.id,
    subaccountId: q.sub.id,
    asset: q.c,
    recipient: q.recipient,
    amountE18: q.amountE18,
    feeE18: q.fee.e18,
    timestampMs: engine.now(),
  })
  return { operation_id: engine.transactions.size, op_uuid: tx.id }
}

export const fundsV3: Record<string, Handler> = {
  'private/transfer_spot': transferSpot,
  'private/withdraw': withdraw,
}
