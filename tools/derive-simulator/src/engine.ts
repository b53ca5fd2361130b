/**
 * The simulator's state and its clock. Time moves only through `advanceTo` (the control API, or
 * the wall clock in `wall` mode); each whole hour crossed steps the price path, pays interest on
 * USDC and funding on perps, settles options expiring at 08:00 UTC, expires stale orders and
 * lets the market maker take resting orders the mark has crossed.
 */

import { E18, mulE18, toE18 } from '@wh/exchange'
import { type Address, getAddress } from 'viem'
import { UNDERLYINGS, type Underlying } from './assets'
import { Catalog } from './catalog'
import { DEFAULT_MARKET, Market, type MarketConfig } from './market'
import { RateLimiter, type RateLimits } from './rate-limit'
import type { SimState } from './sim-state'
import type { SimHistories, SimOrder, SimSubaccount, SimTransaction, SimWallet } from './sim-types'
import { sweepRestingOrders } from './trading'

export const HOUR_MS = 3_600_000
const HOURS_PER_YEAR = 8_760n

export interface EngineConfig {
  chainId: number
  /** Start of simulated time (ms). */
  startMs: number
  market?: Partial<MarketConfig>
  /** Annual rates as decimal strings: what positive USDC earns, what negative USDC pays. */
  supplyApy?: string
  borrowApy?: string
  /** Perp funding rate per hour; longs pay when positive. */
  fundingRatePerHour?: string
  /** How old a request-auth timestamp may be. */
  authMaxAgeMs?: number
  /**
   * v3: what a transfer_spot that creates a subaccount costs, in USD, taken in kind from the amount
   * (derive-ts: "1 USD standard"); a lower `max_fee_usd` is accepted and then fails in its batch.
   * Default 0: the worker's fundings carry no fee (docs/exchange-v3.md "Movements on v3").
   */
  subaccountCreationFeeUsd?: string
  /** per method class, per window of wall-clock time (rate-limit.ts); none: no limit */
  rateLimits?: RateLimits
}

export interface InjectedFailure {
  method: string | undefined
  code: number | undefined
  httpStatus: number | undefined
  remaining: number
}

export class SimEngine implements SimState {
  readonly chainId: number
  readonly market: Market
  readonly catalog = new Catalog()
  readonly wallets = new Map<string, SimWallet>()
  readonly subaccounts = new Map<number, SimSubaccount>()
  readonly orders = new Map<string, SimOrder>()
  readonly transactions = new Map<string, SimTransaction>()
  readonly history: SimHistories = {
    deposits: [],
    withdrawals: [],
    transfers: [],
    interest: [],
    funding: [],
    settlements: [],
    trades: [],
  }
  readonly failures: InjectedFailure[] = []
  readonly authMaxAgeMs: number
  readonly rateLimiter: RateLimiter | undefined
  supplyApyE18: bigint
  borrowApyE18: bigint
  fundingRatePerHourE18: bigint
  subaccountCreationFeeE18: bigint
  nextSubaccountId = 10_001
  #nowMs: number
  #lastTickMs: number
  #listeners = new Set<() => void>()

  constructor(cfg: EngineConfig) {
    this.chainId = cfg.chainId
    this.market = new Market({ ...DEFAULT_MARKET, ...cfg.market })
    this.supplyApyE18 = toE18(cfg.supplyApy ?? '0.05')
    this.borrowApyE18 = toE18(cfg.borrowApy ?? '0.08')
    this.fundingRatePerHourE18 = toE18(cfg.fundingRatePerHour ?? '0.0000125')
    this.authMaxAgeMs = cfg.authMaxAgeMs ?? 300_000
    this.subaccountCreationFeeE18 = toE18(cfg.subaccountCreationFeeUsd ?? '0')
    this.rateLimiter = cfg.rateLimits ? new RateLimiter(cfg.rateLimits) : undefined
    this.#nowMs = cfg.startMs
    this.#lastTickMs = Math.floor(cfg.startMs / HOUR_MS) * HOUR_MS
    this.catalog.refresh(cfg.startMs, (u) => Number(this.market.indexE18(u) / E18))
  }

  now(): number {
    return this.#nowMs
  }

  /** Called after prices or time move (the WebSocket server pushes tickers). */
  onMarketChange(fn: () => void): () => void {
    this.#listeners.add(fn)
    return () => this.#listeners.delete(fn)
  }

  /** Moves simulated time forward to `ms`, processing every hour boundary on the way. */
  advanceTo(ms: number): void {
    if (ms <= this.#nowMs) return
    let ticked = false
    for (let t = this.#lastTickMs + HOUR_MS; t <= ms; t += HOUR_MS) {
      this.#nowMs = t
      this.#hourTick(t)
      this.#lastTickMs = t
      ticked = true
    }
    this.#nowMs = ms
    if (ticked) this.#changed()
  }

  setIndex(u: Underlying, priceE18: bigint): void {
    this.market.setIndex(u, priceE18)
    sweepRestingOrders(this)
    this.#changed()
  }

  /** An account (v3: the owner's own address is the wallet); its keys are set in session-keys.ts. */
  registerWallet(wallet: Address, owner: Address = wallet): SimWallet {
    const key = wallet.toLowerCase()
    const w = this.wallets.get(key) ?? {
      wallet: getAddress(wallet),
      owner: getAddress(owner),
      sessionKeys: new Map(),
      whitelist: new Set<string>(),
      walletBalances: new Map(),
    }
    this.wallets.set(key, w)
    return w
  }

  wallet(address: string): SimWallet | undefined {
    return this.wallets.get(address.toLowerCase())
  }

  #hourTick(t: number): void {
    this.market.stepHour()
    this.#accrue(t)
    this.#settleExpired(t)
    this.#expireOrders(t)
    this.catalog.refresh(t, (u) => Number(this.market.indexE18(u) / E18))
    sweepRestingOrders(this)
  }

  /** One hour of interest on USDC (supply on credit, borrow on debit) and funding on perps. */
  #accrue(t: number): void {
    for (const sub of this.subaccounts.values()) {
      const cash = sub.balances.get('USDC') ?? 0n
      const apy = cash >= 0n ? this.supplyApyE18 : this.borrowApyE18
      const interest = mulE18(cash, apy) / HOURS_PER_YEAR
      if (interest !== 0n) {
        sub.balances.set('USDC', cash + interest)
        sub.cumulativeInterestE18 += interest
        this.history.interest.push({ subaccountId: sub.id, timestampMs: t, interestE18: interest })
      }
      for (const [name, pos] of sub.positions) {
        const inst = this.catalog.get(name)
        if (inst?.type !== 'perp' || pos.amountE18 === 0n) continue
        const notional = mulE18(pos.amountE18, this.market.indexE18(inst.currency))
        const funding = -mulE18(notional, this.fundingRatePerHourE18)
        sub.balances.set('USDC', (sub.balances.get('USDC') ?? 0n) + funding)
        pos.cumulativeFundingE18 += funding
        this.history.funding.push({ subaccountId: sub.id, timestampMs: t, instrument: name, fundingE18: funding })
      }
    }
  }

  /** Cash-settles every option expiring at or before `t` at the index price of that moment. */
  #settleExpired(t: number): void {
    for (const inst of this.catalog.byName.values()) {
      const o = inst.option
      if (!o || o.settlementPriceE18 !== null || o.expirySec * 1000 > t) continue
      o.settlementPriceE18 = this.market.indexE18(inst.currency)
    }
    for (const sub of this.subaccounts.values()) {
      for (const [name, pos] of sub.positions) {
        const o = this.catalog.get(name)?.option
        if (!o || o.settlementPriceE18 === null) continue
        const s = o.settlementPriceE18
        const payoff =
          o.type === 'C' ? (s > o.strikeE18 ? s - o.strikeE18 : 0n) : s < o.strikeE18 ? o.strikeE18 - s : 0n
        const pnl = mulE18(pos.amountE18, payoff)
        sub.balances.set('USDC', (sub.balances.get('USDC') ?? 0n) + pnl)
        sub.positions.delete(name)
        this.history.settlements.push({
          subaccountId: sub.id,
          timestampMs: o.expirySec * 1000,
          instrument: name,
          expirySec: o.expirySec,
          amountE18: pos.amountE18,
          settlementPriceE18: s,
          pnlE18: pnl,
        })
      }
    }
  }

  #expireOrders(t: number): void {
    for (const o of this.orders.values()) {
      if (o.status !== 'open') continue
      const opt = this.catalog.get(o.instrument)?.option
      if (o.expirySec * 1000 <= t || (opt && opt.expirySec * 1000 <= t)) {
        o.status = 'expired'
        o.updatedMs = t
      }
    }
  }

  #changed(): void {
    for (const fn of this.#listeners) fn()
  }

  /** Spot prices as plain numbers, for listing strikes. */
  spotNumbers(): Record<Underlying, number> {
    const out = {} as Record<Underlying, number>
    for (const u of UNDERLYINGS) out[u] = Number(this.market.indexE18(u) / E18)
    return out
  }
}
