/**
 * Subaccounts and collateral on the engine, whatever moves it (v3's transfer_spot and withdraw in
 * v3/, an L1 deposit in l1-deposits.ts, the control API): opening a subaccount and the
 * account's fallback one, crediting a deposit, debiting free collateral, moving collateral
 * between subaccounts, and recording each as a transaction.
 */
import { randomUUID } from 'node:crypto'
import { fromE18 } from '@wh/exchange'
import { type Address, type Hex, keccak256, toHex } from 'viem'
import type { CollateralName } from './assets'
import type { SimEngine } from './engine'
import { marginOk } from './margin'
import { rpcErr } from './rpc-error'
import type { SimSubaccount, SimTransaction, SimWallet } from './sim-types'

/** Records a transaction (settled: the simulator executes at once) and names it by a uuid and a hash. */
export function txRecord(
  engine: SimEngine,
  kind: SimTransaction['kind'],
  data: Record<string, unknown>,
  status: 'settled' | 'reverted' | 'pending' = 'settled',
) {
  const id = randomUUID()
  engine.transactions.set(id, { id, status, kind, data })
  return { id, txHash: keccak256(toHex(id)) as Hex }
}

/** A deposit landing in a subaccount: the balance and the deposit history (an L1 deposit, the control API's). */
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

/**
 * Moves collateral between two subaccounts: refused when the sender lacks it or its margin would
 * not hold; recorded as a transaction and on both sides' transfer histories. A fee (v3 charges
 * one for creating a subaccount) is taken in kind: the receiver gets `amountE18 - feeE18`. v3's
 * transfer_spot (v3/methods-funds.ts) moves money through here.
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
