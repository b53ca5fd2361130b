/**
 * The engine's state as the rules that act on it see it (trading.ts, margin.ts, session-keys.ts):
 * `SimEngine` (engine.ts) implements it. A leaf of its own because the engine runs those rules
 * (its clock sweeps resting orders), so they must not import the engine back.
 */
import type { Address } from 'viem'
import type { Catalog } from './catalog'
import type { Market } from './market'
import type { SimHistories, SimOrder, SimSubaccount, SimWallet } from './sim-types'

export interface SimState {
  readonly market: Market
  readonly catalog: Catalog
  /** lower-cased wallet address → the account */
  readonly wallets: Map<string, SimWallet>
  readonly subaccounts: Map<number, SimSubaccount>
  readonly orders: Map<string, SimOrder>
  readonly history: SimHistories
  /** simulated time, ms */
  now(): number
  /** An account (v3: the owner's own address is the wallet), created on first sight. */
  registerWallet(wallet: Address, owner?: Address): SimWallet
}
