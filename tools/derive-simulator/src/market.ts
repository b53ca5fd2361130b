/**
 * The simulated market: index prices per underlying on a seeded path the simulator controls,
 * option marks and greeks from Black-Scholes with a flat implied volatility, and a market
 * maker quoting a fixed spread and depth around every mark.
 */
import { E18, e18ToFloat, floatToE18, maxBig, mulE18, toE18 } from '@wh/exchange'
import type { Underlying } from './assets'
import { blackScholes, type Greeks } from './black-scholes'
import type { SimInstrument } from './sim-types'

const YEAR_MS = 365 * 86_400_000
const HOUR_MS = 3_600_000
const MARK_STEP = 10n ** 12n

export interface MarketConfig {
  /** Starting index prices, decimal strings. */
  prices: Record<Underlying, string>
  /** Flat implied volatility per underlying (0.6 = 60%). */
  impliedVol: Record<Underlying, number>
  /** Annualised volatility of the hourly price path; 0 keeps prices where the control API puts them. */
  pathVolatility: number
  seed: number
  /** Half-spread of the market maker around the mark, in basis points. */
  spreadBps: { option: number; perp: number; erc20: number }
  /** Amount the market maker shows on each side. */
  depth: string
}

export const DEFAULT_MARKET: MarketConfig = {
  prices: { ETH: '3000', BTC: '90000' },
  impliedVol: { ETH: 0.6, BTC: 0.5 },
  pathVolatility: 0,
  seed: 1,
  spreadBps: { option: 300, perp: 5, erc20: 10 },
  depth: '100',
}

export interface Quote {
  markE18: bigint
  bidE18: bigint
  askE18: bigint
  depthE18: bigint
  greeks: Greeks | null
  iv: number
}

export class Market {
  readonly index = new Map<Underlying, bigint>()
  readonly #cfg: MarketConfig
  #rng: () => number

  constructor(cfg: MarketConfig) {
    this.#cfg = cfg
    for (const [u, p] of Object.entries(cfg.prices)) this.index.set(u as Underlying, toE18(p))
    this.#rng = mulberry32(cfg.seed)
  }

  indexE18(u: Underlying): bigint {
    return this.index.get(u) ?? 0n
  }

  setIndex(u: Underlying, priceE18: bigint): void {
    this.index.set(u, priceE18)
  }

  /** One hour of geometric Brownian motion on every index (no-op when the path volatility is 0). */
  stepHour(): void {
    const sigma = this.#cfg.pathVolatility
    if (sigma <= 0) return
    const dt = HOUR_MS / YEAR_MS
    for (const [u, p] of this.index) {
      const z = gaussian(this.#rng)
      const next = e18ToFloat(p) * Math.exp(-0.5 * sigma * sigma * dt + sigma * Math.sqrt(dt) * z)
      this.index.set(u, floatToE18(next, E18 / 100n))
    }
  }

  quote(inst: SimInstrument, nowMs: number): Quote {
    const idx = this.indexE18(inst.currency)
    const iv = this.#cfg.impliedVol[inst.currency]
    let markE18 = idx
    let greeks: Greeks | null = null
    if (inst.option) {
      const years = (inst.option.expirySec * 1000 - nowMs) / YEAR_MS
      greeks = blackScholes(e18ToFloat(idx), e18ToFloat(inst.option.strikeE18), years, iv, inst.option.type)
      markE18 = floatToE18(greeks.price, MARK_STEP)
    }
    const bps = BigInt(this.#cfg.spreadBps[inst.type])
    const half = (markE18 * bps) / 10_000n
    const bidE18 = floorTo(maxBig(markE18 - half, 0n), inst.tickE18)
    const askE18 = maxBig(ceilTo(markE18 + half, inst.tickE18), inst.tickE18)
    return { markE18, bidE18, askE18, depthE18: toE18(this.#cfg.depth), greeks, iv }
  }

  /** Value of `amount` of an underlying or USDC in USD. */
  valueE18(asset: string, amountE18: bigint): bigint {
    if (asset === 'USDC') return amountE18
    return mulE18(amountE18, this.indexE18(asset as Underlying))
  }
}

/**
 * A seeded geometric random walk of index prices, for a simulator that follows the wall clock (the
 * local run): each step moves a price by the Brownian increment of `dtMs` at `annualVolatility`,
 * rounded to a cent. The same seed gives the same path of draws.
 */
export function priceWalk(seed: number, annualVolatility: number): (priceE18: bigint, dtMs: number) => bigint {
  const rng = mulberry32(seed)
  return (priceE18, dtMs) => {
    const dt = dtMs / YEAR_MS
    const z = gaussian(rng)
    const sigma = annualVolatility
    const next = e18ToFloat(priceE18) * Math.exp(-0.5 * sigma * sigma * dt + sigma * Math.sqrt(dt) * z)
    return floatToE18(next, E18 / 100n)
  }
}

const floorTo = (x: bigint, step: bigint) => (x / step) * step
const ceilTo = (x: bigint, step: bigint) => ((x + step - 1n) / step) * step

/** Small seeded PRNG so a price path replays exactly. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function gaussian(rng: () => number): number {
  const u = Math.max(rng(), 1e-12)
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng())
}
