/**
 * The instrument catalog: a perp and a spot market per underlying, and options listed as time
 * passes: the next seven daily expiries plus Fridays up to four weeks out, all at 08:00 UTC,
 * strikes on a grid around the spot at listing time. Listed instruments are never removed;
 * expired options stay with their settlement price.
 */
import { E18, EXPIRY_HOUR_UTC, optionName } from '@wh/exchange'
import { COLLATERALS, OPTION_ASSETS, PERP_ASSETS, UNDERLYINGS, type Underlying } from './assets'
import { FEE_SCHEDULE } from './fees'
import type { SimInstrument } from './sim-types'

const DAY_MS = 86_400_000
const DAILY_EXPIRIES = 7
const WEEKLY_HORIZON_DAYS = 28
const STRIKE_RANGE = 0.3

const GRID: Record<Underlying, { strikeStep: number; tick: bigint; step: bigint; perpTick: bigint }> = {
  ETH: { strikeStep: 100, tick: E18 / 10n, step: E18 / 100n, perpTick: E18 / 100n },
  BTC: { strikeStep: 1000, tick: E18, step: E18 / 1000n, perpTick: E18 / 10n },
}

/**
 * Derive packs an option's expiry, strike and type into the asset sub id; we use the same idea
 * (expiry in the low 32 bits, strike in 1e8 above it, the call flag at bit 95), which only has
 * to be unique and stable here.
 */
export function optionSubId(expirySec: number, strikeE18: bigint, type: 'C' | 'P'): bigint {
  return BigInt(expirySec) | ((strikeE18 / 10n ** 10n) << 32n) | (type === 'C' ? 1n << 95n : 0n)
}

export class Catalog {
  readonly byName = new Map<string, SimInstrument>()
  readonly #listedExpiries = new Set<string>()

  constructor() {
    for (const u of UNDERLYINGS) {
      const g = GRID[u]
      this.#add(base(`${u}-PERP`, 'perp', u, PERP_ASSETS[u], 0n, g.perpTick, g.step))
      this.#add(base(`${u}-USDC`, 'erc20', u, COLLATERALS[u].address, 0n, g.perpTick, g.step))
    }
  }

  /** Lists the expiries due at `nowMs` with strikes around `spot`. */
  refresh(nowMs: number, spot: (u: Underlying) => number): void {
    for (const expirySec of expiriesAfter(nowMs)) {
      for (const u of UNDERLYINGS) {
        const key = `${u}:${expirySec}`
        if (this.#listedExpiries.has(key)) continue
        this.#listedExpiries.add(key)
        const g = GRID[u]
        const s = spot(u)
        const lo = Math.ceil((s * (1 - STRIKE_RANGE)) / g.strikeStep) * g.strikeStep
        for (let k = lo; k <= s * (1 + STRIKE_RANGE); k += g.strikeStep) {
          const strikeE18 = BigInt(k) * E18
          for (const type of ['C', 'P'] as const) {
            const name = optionName(u, expirySec, String(k), type)
            const inst = base(
              name,
              'option',
              u,
              OPTION_ASSETS[u],
              optionSubId(expirySec, strikeE18, type),
              g.tick,
              g.step,
            )
            inst.option = { expirySec, strikeE18, type, settlementPriceE18: null }
            this.#add(inst)
          }
        }
      }
    }
  }

  get(name: string): SimInstrument | undefined {
    return this.byName.get(name)
  }

  #add(i: SimInstrument): void {
    this.byName.set(i.name, i)
  }
}

/** The expiries listed at `nowMs`: daily for a week, Fridays for four weeks. */
export function expiriesAfter(nowMs: number): number[] {
  const out = new Set<number>()
  const d = new Date(nowMs)
  let t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), EXPIRY_HOUR_UTC)
  if (t <= nowMs) t += DAY_MS
  for (let i = 0; i < WEEKLY_HORIZON_DAYS; i++, t += DAY_MS) {
    if (i < DAILY_EXPIRIES || new Date(t).getUTCDay() === 5) out.add(t / 1000)
  }
  return [...out]
}

function base(
  name: string,
  type: SimInstrument['type'],
  currency: Underlying,
  assetAddress: SimInstrument['assetAddress'],
  subId: bigint,
  tickE18: bigint,
  amountStepE18: bigint,
): SimInstrument {
  const fees = FEE_SCHEDULE[type]
  return {
    name,
    type,
    currency,
    assetAddress,
    subId,
    tickE18,
    amountStepE18,
    minAmountE18: amountStepE18,
    maxAmountE18: 10_000n * E18,
    makerFeeRateE18: fees.makerRate,
    takerFeeRateE18: fees.takerRate,
    baseFeeE18: fees.baseFee,
    feeCapRateE18: fees.capRate,
    option: null,
  }
}
