/** Subaccounts and collateral movements: create, deposit, withdraw, transfer between subaccounts. */
import { randomUUID } from 'node:crypto'
import { type Address, type Hex, keccak256, toHex } from 'viem'
import { fromE18, toE18, toUnits } from '../protocol/decimal'
import { EMPTY_MODULE_DATA, encodeDepositData, encodeTransferData, encodeWithdrawalData } from '../protocol/module-data'
import { RPC } from '../protocol/rpc-codes'
import { CreateSubaccountParams, DepositParams, TransferErc20Params, WithdrawParams } from '../protocol/schemas'
import { COLLATERALS, type CollateralName, collateralByAddress, isCollateralName } from './assets'
import type { SimEngine } from './engine'
import { type Ctx, check, type Handler, ownSubaccount, requireWallet } from './handler'
import { marginOk } from './margin'
import { rpcErr, SimRpcError } from './rpc-error'
import type { SimSubaccount, SimWallet } from './sim-types'
import { verifyAction } from './verify'
import { subaccountView } from './views'

function collateral(name: string) {
  if (!isCollateralName(name)) throw rpcErr.asset(name)
  return COLLATERALS[name]
}

function positiveAmount(amount: string, decimals: number): bigint {
  let units: bigint
  try {
    units = toUnits(amount, decimals)
  } catch {
    throw new SimRpcError(RPC.INVALID_AMOUNT, 'Invalid amount', `more than ${decimals} decimals`)
  }
  if (units <= 0n) throw new SimRpcError(RPC.INVALID_AMOUNT, 'Invalid amount', 'amount must be positive')
  return units
}

/** Records a transaction (settled: the simulator executes at once) and names it by a uuid and a hash. */
export function txRecord(
  engine: SimEngine,
  kind: 'deposit' | 'withdrawal' | 'transfer' | 'create_subaccount',
  data: Record<string, unknown>,
  status: 'settled' | 'reverted' | 'pending' = 'settled',
) {
  const id = randomUUID()
  engine.transactions.set(id, { id, status, kind, data })
  return { id, txHash: keccak256(toHex(id)) as Hex }
}

/** Moves wallet funds into a subaccount; shared by deposit and create_subaccount. */
function creditFromWallet(
  engine: SimEngine,
  w: SimWallet,
  sub: SimSubaccount,
  asset: CollateralName,
  amountE18: bigint,
  tx: { id: string; txHash: Hex; created: boolean },
) {
  const have = w.walletBalances.get(asset) ?? 0n
  if (have < amountE18) throw rpcErr.funds(`wallet holds ${have} of ${asset}`)
  w.walletBalances.set(asset, have - amountE18)
  creditDeposit(engine, sub, asset, amountE18, tx)
}

/** A deposit landing in a subaccount: the balance and the deposit history (v2's wallet deposits, v3's L1 ones). */
export function creditDeposit(
  engine: SimEngine,
  sub: SimSubaccount,
  asset: CollateralName,
  amountE18: bigint,
  tx: { id: string; txHash: Hex; created: boolean },
) {
  sub.balances.set(asset, (sub.balances.get(asset) ?? 0n) + amountE18)
  engine.history.deposits.push({
    subaccountId: sub.id,
    timestampMs: engine.now(),
    asset,
    amountE18,
    transactionId: tx.id,
    txHash: tx.txHash,
    newSubaccount: tx.created,
  })
}

/** Takes `amountE18` of `asset` out of the subaccount, refusing (insufficient funds) more than its free collateral. */
export function debitFreeCollateral(
  engine: SimEngine,
  sub: SimSubaccount,
  asset: CollateralName,
  amountE18: bigint,
  what: 'transfer' | 'withdrawal',
): void {
  const have = sub.balances.get(asset) ?? 0n
  if (have < amountE18 || !marginOk(engine, sub, { asset: { name: asset, delta: -amountE18 } }))
    throw rpcErr.funds(`${what} exceeds free collateral`)
  sub.balances.set(asset, have - amountE18)
}

export function newSubaccount(
  engine: SimEngine,
  wallet: Address,
  marginType: SimSubaccount['marginType'],
): SimSubaccount {
  const sub: SimSubaccount = {
    id: engine.nextSubaccountId++,
    wallet,
    label: '',
    marginType,
    manager: engine.contracts.standardManager,
    balances: new Map(),
    cumulativeInterestE18: 0n,
    positions: new Map(),
    usedNonces: new Set(),
  }
  engine.subaccounts.set(sub.id, sub)
  return sub
}

/**
 * The account's fallback subaccount (manager id 0 on Derive): it catches L1 deposits that cannot be
 * applied, and the account's first deposit creates it (l1-deposits.ts, control.ts `depositL1`).
 */
export function fallbackSubaccount(engine: SimEngine, w: SimWallet): SimSubaccount {
  const id = w.fallbackSubaccountId
  const have = id === undefined ? undefined : engine.subaccounts.get(id)
  if (have) return have
  const sub = newSubaccount(engine, w.wallet, 'SM')
  sub.label = 'fallback'
  w.fallbackSubaccountId = sub.id
  return sub
}

export const accountMethods: Record<string, Handler> = {
  'private/get_subaccounts': (ctx) => {
    const w = requireWallet(ctx)
    const ids = [...ctx.engine.subaccounts.values()].filter((s) => s.wallet === w.wallet).map((s) => s.id)
    return { wallet: w.wallet, subaccount_ids: ids }
  },

  'private/get_subaccount': (ctx, p) => subaccountView(ctx.engine, ownSubaccount(ctx, p.subaccount_id)),

  // every subaccount of the wallet in one answer, each shaped as get_subaccount's
  'private/get_all_portfolios': (ctx) => {
    const w = requireWallet(ctx)
    return [...ctx.engine.subaccounts.values()]
      .filter((s) => s.wallet === w.wallet)
      .map((s) => subaccountView(ctx.engine, s))
  },

  'private/create_subaccount': async (ctx, raw) => {
    const w = requireWallet(ctx)
    const p = check<CreateSubaccountParams>(CreateSubaccountParams, raw)
    if (p.wallet.toLowerCase() !== w.wallet.toLowerCase())
      throw rpcErr.auth('wallet does not match the authenticated wallet')
    const c = collateral(p.asset_name)
    const units = positiveAmount(p.amount, c.decimals)
    const data = encodeDepositData(units, c.address, ctx.engine.contracts.standardManager)
    await verifyAction(ctx.engine, w, w, actionOf(ctx, 0, ctx.engine.contracts.depositModule, data, p), p.signature)
    const sub = newSubaccount(ctx.engine, w.wallet, p.margin_type)
    const tx = txRecord(ctx.engine, 'create_subaccount', { subaccount_id: sub.id })
    creditFromWallet(ctx.engine, w, sub, c.name, toE18(p.amount), { ...tx, created: true })
    return { status: 'requested', transaction_id: tx.id }
  },

  'private/deposit': async (ctx, raw) => {
    const w = requireWallet(ctx)
    const p = check<DepositParams>(DepositParams, raw)
    const sub = ownSubaccount(ctx, p.subaccount_id)
    const c = collateral(p.asset_name)
    const units = positiveAmount(p.amount, c.decimals)
    const data = encodeDepositData(units, c.address, sub.manager)
    await verifyAction(
      ctx.engine,
      w,
      sub,
      actionOf(ctx, sub.id, ctx.engine.contracts.depositModule, data, p),
      p.signature,
    )
    const tx = txRecord(ctx.engine, 'deposit', { subaccount_id: sub.id, asset_name: c.name, amount: p.amount })
    creditFromWallet(ctx.engine, w, sub, c.name, toE18(p.amount), { ...tx, created: false })
    return { status: 'requested', transaction_id: tx.id }
  },

  'private/withdraw': async (ctx, raw) => {
    const w = requireWallet(ctx)
    const p = check<WithdrawParams>(WithdrawParams, raw)
    const sub = ownSubaccount(ctx, p.subaccount_id)
    const c = collateral(p.asset_name)
    const units = positiveAmount(p.amount, c.decimals)
    const data = encodeWithdrawalData(c.address, units)
    await verifyAction(
      ctx.engine,
      w,
      sub,
      actionOf(ctx, sub.id, ctx.engine.contracts.withdrawalModule, data, p),
      p.signature,
    )
    const amountE18 = toE18(p.amount)
    debitFreeCollateral(ctx.engine, sub, c.name, amountE18, 'withdrawal')
    w.walletBalances.set(c.name, (w.walletBalances.get(c.name) ?? 0n) + amountE18)
    const tx = txRecord(ctx.engine, 'withdrawal', { subaccount_id: sub.id, asset_name: c.name, amount: p.amount })
    ctx.engine.history.withdrawals.push({
      subaccountId: sub.id,
      timestampMs: ctx.engine.now(),
      asset: c.name,
      amountE18,
      txHash: tx.txHash,
      transactionId: tx.id,
    })
    return { status: 'requested', transaction_id: tx.id }
  },

  'private/transfer_erc20': async (ctx, raw) => {
    const w = requireWallet(ctx)
    const p = check<TransferErc20Params>(TransferErc20Params, raw)
    const from = ownSubaccount(ctx, p.subaccount_id)
    const to = ctx.engine.subaccounts.get(p.recipient_subaccount_id)
    if (!to) throw rpcErr.subaccount(p.recipient_subaccount_id)
    if (to.wallet !== from.wallet) throw new SimRpcError(10002, 'Sender and recipient wallet do not match', null)
    if (to.id === from.id) throw new SimRpcError(10003, 'Sender and recipient subaccount IDs are the same', null)
    const c = collateralByAddress(p.transfer.address)
    if (!c) throw rpcErr.asset(p.transfer.address)
    const amountE18 = toE18(p.transfer.amount)
    if (amountE18 <= 0n) throw new SimRpcError(RPC.INVALID_AMOUNT, 'Invalid amount', 'amount must be positive')
    const module = ctx.engine.contracts.transferModule
    const senderData = encodeTransferData(BigInt(to.id), ctx.engine.contracts.standardManager, [
      { asset: c.address, subId: BigInt(p.transfer.sub_id), amountE18 },
    ])
    await verifyAction(
      ctx.engine,
      w,
      from,
      actionOf(ctx, from.id, module, senderData, p.sender_details),
      p.sender_details.signature,
    )
    await verifyAction(
      ctx.engine,
      w,
      to,
      actionOf(ctx, to.id, module, EMPTY_MODULE_DATA, p.recipient_details),
      p.recipient_details.signature,
    )
    const tx = moveCollateral(ctx.engine, from, to, c.name, amountE18)
    return { status: 'requested', transaction_id: tx.id }
  },
}

/**
 * Moves collateral between two subaccounts: refused when the sender lacks it or its margin would
 * not hold; recorded as a transaction and on both sides' transfer histories. A fee (v3 charges
 * one for creating a subaccount) is taken in kind: the receiver gets `amountE18 - feeE18`. v2's
 * transfer_erc20 and v3's transfer_spot (src/v3/sim) both move money through here.
 */
export function moveCollateral(
  engine: SimEngine,
  from: SimSubaccount,
  to: SimSubaccount,
  asset: CollateralName,
  amountE18: bigint,
  feeE18 = 0n,
): { id: string; txHash: Hex } {
  debitFreeCollateral(engine, from, asset, amountE18, 'transfer')
  to.balances.set(asset, (to.balances.get(asset) ?? 0n) + amountE18 - feeE18)
  const tx = txRecord(engine, 'transfer', { from: from.id, to: to.id, asset_name: asset, amount: fromE18(amountE18) })
  const side = { timestampMs: engine.now(), asset, txHash: tx.txHash, transactionId: tx.id }
  engine.history.transfers.push(
    { ...side, subaccountId: from.id, counterparty: to.id, outgoing: true, amountE18, feeE18 },
    { ...side, subaccountId: to.id, counterparty: from.id, outgoing: false, amountE18: amountE18 - feeE18, feeE18: 0n },
  )
  return tx
}

interface Signed {
  nonce: number | string
  signer: string
  signature_expiry_sec: number
}

export function actionOf(_ctx: Ctx, subaccountId: number, module: Address, data: Hex, s: Signed) {
  return {
    subaccountId: BigInt(subaccountId),
    nonce: BigInt(s.nonce),
    module,
    data,
    expirySec: BigInt(s.signature_expiry_sec),
    signer: s.signer as Address,
  }
}
