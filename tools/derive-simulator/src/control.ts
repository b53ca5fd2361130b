/**
 * The simulator's control surface, for tests and the local run: move the clock, set prices,
 * register accounts and session keys, land L1 deposits, credit or read an account's on-chain
 * balance, force a balance (a divergence for reconciliation tests), and inject failures into the
 * v3 wire. Also served over HTTP under /_sim/.
 */

import { fromE18, type ProtocolScope, toE18 } from '@wh/exchange'
import { type Address, getAddress } from 'viem'
import { creditDeposit, fallbackSubaccount, newSubaccount, txRecord } from './accounts'
import { isCollateralName, type Underlying } from './assets'
import type { SimEngine } from './engine'
import { CONTROL_DEFAULT_KEY, setSessionKey } from './session-keys'
import { accountOfOwner } from './v3/verify'

/**
 * A session key the control API registers without the owner's signed action: a plain address gets
 * every power and no expiry (CONTROL_DEFAULT_KEY: a key the test is not about); an object names its
 * scopes, subaccounts and expiry, as `private/set_session_key` would register it.
 */
export type SessionKeyGrant =
  | Address
  | {
      address: Address
      scopes?: ProtocolScope[]
      subaccountIds?: number[]
      /** unix seconds */
      expirySec?: number
      label?: string
      offchainScopes?: string[]
    }

export interface SimControl {
  nowMs(): number
  /** Moves simulated time forward by `ms`, running every hourly tick and 08:00 UTC expiry on the way. */
  advance(ms: number): number
  advanceTo(ms: number): number
  setPrice(currency: Underlying, price: string): void
  registerWallet(p: { wallet: Address; owner?: Address; sessionKeys?: SessionKeyGrant[] }): void
  /**
   * Credits the account's on-chain balance: what a v3 withdrawal to the owner pays into, and what
   * the local bridge (packages/wallet/src/bridge/local.ts) and the solvency job read as the exchange wallet.
   */
  fundWallet(wallet: Address, asset: string, amount: string): void
  walletBalance(wallet: Address, asset: string): string
  /** Overwrites a subaccount balance (simulates a divergence the journal does not know about). */
  setBalance(subaccountId: number, asset: string, amount: string): void
  /**
   * Opens a subaccount of `wallet` holding `balances` (decimal strings per asset) without a signed
   * action: a populated exchange for benchmarks and tests that are not about funding. Its id.
   */
  openSubaccount(wallet: Address, balances: Record<string, string>): number
  /**
   * v3: an L1 deposit (OnchainActionManager `deposit` / `depositToNewSubaccount`) of `owner`'s
   * account landing: into `subaccountId`, or into a new subaccount when it is omitted, which opens
   * the account's fallback subaccount first when it has none (as the L1 watcher does,
   * l1-deposits.ts). The subaccount's id.
   */
  depositL1(p: { owner: Address; asset: string; amount: string; subaccountId?: number }): number
  /** The subaccounts of the account `owner` owns (v3: the owner is the account), and which is its fallback. */
  subaccountsOf(owner: Address): { subaccounts: { id: number; label: string }[]; fallbackSubaccountId: number | null }
  /** The next `count` v3 calls (of `method`, e.g. `private/transfer_spot`, or any) fail with a JSON-RPC `code` or an HTTP status. */
  failNext(p: { method?: string; code?: number; httpStatus?: number; count?: number }): void
}

export function createControl(engine: SimEngine, wallClockOffset?: { offsetMs: number }): SimControl {
  const asset = (a: string) => {
    if (!isCollateralName(a)) throw new Error(`unknown asset ${a}`)
    return a
  }
  return {
    nowMs: () => engine.now(),
    advance(ms) {
      if (wallClockOffset) wallClockOffset.offsetMs += ms
      engine.advanceTo(engine.now() + ms)
      return engine.now()
    },
    advanceTo(ms) {
      if (wallClockOffset) wallClockOffset.offsetMs += Math.max(ms - engine.now(), 0)
      engine.advanceTo(ms)
      return engine.now()
    },
    setPrice: (currency, price) => engine.setIndex(currency, toE18(price)),
    registerWallet: (p) => {
      const w = engine.registerWallet(p.wallet, p.owner)
      for (const g of p.sessionKeys ?? []) {
        const grant = typeof g === 'string' ? { address: g } : g
        setSessionKey(engine, w, {
          address: getAddress(grant.address),
          expirySec: grant.expirySec ?? CONTROL_DEFAULT_KEY.expirySec,
          scopes: grant.scopes ?? CONTROL_DEFAULT_KEY.scopes,
          subaccountIds: grant.subaccountIds ?? [],
          offchainScopes: grant.offchainScopes ?? ['account_info'],
          label: grant.label ?? '',
          ipWhitelist: [],
          registeredSec: Math.floor(engine.now() / 1000),
        })
      }
    },
    fundWallet(wallet, a, amount) {
      const w = engine.wallet(wallet) ?? engine.registerWallet(wallet)
      const n = asset(a)
      w.walletBalances.set(n, (w.walletBalances.get(n) ?? 0n) + toE18(amount))
    },
    walletBalance: (wallet, a) => fromE18(engine.wallet(wallet)?.walletBalances.get(asset(a)) ?? 0n),
    setBalance(subaccountId, a, amount) {
      const sub = engine.subaccounts.get(subaccountId)
      if (!sub) throw new Error(`unknown subaccount ${subaccountId}`)
      sub.balances.set(asset(a), toE18(amount))
    },
    openSubaccount(wallet, balances) {
      const w = engine.wallet(wallet) ?? engine.registerWallet(wallet)
      const sub = newSubaccount(engine, w.wallet, 'SM')
      for (const [a, amount] of Object.entries(balances)) sub.balances.set(asset(a), toE18(amount))
      return sub.id
    },
    depositL1(p) {
      const w = accountOfOwner(engine, p.owner) ?? engine.registerWallet(p.owner)
      if (p.subaccountId === undefined) fallbackSubaccount(engine, w) // the account's first deposit opens it too
      const sub =
        p.subaccountId === undefined ? newSubaccount(engine, w.wallet, 'SM') : engine.subaccounts.get(p.subaccountId)
      if (!sub || sub.wallet !== w.wallet) throw new Error(`subaccount ${p.subaccountId} is not ${p.owner}'s`)
      const n = asset(p.asset)
      const tx = txRecord(engine, 'deposit', { subaccount: sub.id, asset_name: n, amount: p.amount })
      creditDeposit(engine, sub, n, toE18(p.amount), { ...tx, created: p.subaccountId === undefined })
      return sub.id
    },
    subaccountsOf(owner) {
      const w = accountOfOwner(engine, owner)
      const subaccounts = w
        ? [...engine.subaccounts.values()]
            .filter((s) => s.wallet === w.wallet)
            .map((s) => ({ id: s.id, label: s.label }))
        : []
      return { subaccounts, fallbackSubaccountId: w?.fallbackSubaccountId ?? null }
    },
    failNext: (p) => {
      engine.failures.push({ method: p.method, code: p.code, httpStatus: p.httpStatus, remaining: p.count ?? 1 })
    },
  }
}
