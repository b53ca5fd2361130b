/**
 * A deliberately simple standard-margin model (Derive's SRM is richer): the subaccount value
 * (collateral at index, positions at mark) must cover an initial margin of 15% of the index per
 * uncovered short option and 10% per perp contract. A short call covered by spot of the same
 * underlying needs no extra margin. USDC may not go negative through a trade or a withdrawal
 * (the simulator does not lend); settlement and funding may push it below zero, which accrues
 * borrow interest.
 */
import { absBig, E18, minBig, mulE18 } from '@wh/exchange'
import type { Underlying } from './assets'
import type { SimState } from './sim-state'
import type { SimSubaccount } from './sim-types'

const SHORT_OPTION_IM = (E18 * 15n) / 100n
const PERP_IM = E18 / 10n

export interface MarginChange {
  cash?: bigint
  asset?: { name: string; delta: bigint }
  position?: { instrument: string; delta: bigint; priceE18: bigint }
}

export interface MarginView {
  valueE18: bigint
  collateralsValueE18: bigint
  positionsValueE18: bigint
  initialMarginE18: bigint
}

/** Value and initial margin of a subaccount, optionally after a hypothetical change. */
export function marginView(engine: SimState, sub: SimSubaccount, change: MarginChange = {}): MarginView {
  const balances = new Map(sub.balances)
  if (change.cash) balances.set('USDC', (balances.get('USDC') ?? 0n) + change.cash)
  if (change.asset) {
    const n = change.asset.name as 'USDC'
    balances.set(n, (balances.get(n) ?? 0n) + change.asset.delta)
  }
  const positions = new Map<string, bigint>()
  for (const [name, p] of sub.positions) positions.set(name, p.amountE18)
  if (change.position) {
    const { instrument, delta } = change.position
    positions.set(instrument, (positions.get(instrument) ?? 0n) + delta)
  }
  let collateralsValueE18 = 0n
  for (const [asset, amt] of balances) collateralsValueE18 += engine.market.valueE18(asset, amt)
  let positionsValueE18 = 0n
  let initialMarginE18 = 0n
  const coverLeft = new Map<Underlying, bigint>()
  for (const u of ['ETH', 'BTC'] as const) coverLeft.set(u, balances.get(u) ?? 0n)
  for (const [name, amt] of positions) {
    const inst = engine.catalog.get(name)
    if (!inst || amt === 0n) continue
    const q = engine.market.quote(inst, engine.now())
    positionsValueE18 += mulE18(amt, q.markE18)
    const idx = engine.market.indexE18(inst.currency)
    if (inst.type === 'perp') initialMarginE18 += mulE18(mulE18(absBig(amt), idx), PERP_IM)
    if (inst.option && amt < 0n) {
      let uncovered = -amt
      if (inst.option.type === 'C') {
        const cover = minBig(uncovered, coverLeft.get(inst.currency) ?? 0n)
        coverLeft.set(inst.currency, (coverLeft.get(inst.currency) ?? 0n) - cover)
        uncovered -= cover
      }
      initialMarginE18 += mulE18(mulE18(uncovered, idx), SHORT_OPTION_IM)
    }
  }
  return {
    valueE18: collateralsValueE18 + positionsValueE18,
    collateralsValueE18,
    positionsValueE18,
    initialMarginE18,
  }
}

/** True when the change keeps USDC non-negative and the value above the initial margin. */
export function marginOk(engine: SimState, sub: SimSubaccount, change: MarginChange): boolean {
  const cash =
    (sub.balances.get('USDC') ?? 0n) + (change.cash ?? 0n) + (change.asset?.name === 'USDC' ? change.asset.delta : 0n)
  if (cash < 0n && (change.cash ?? 0n) + (change.asset?.name === 'USDC' ? change.asset.delta : 0n) < 0n) return false
  if (
    change.asset &&
    change.asset.name !== 'USDC' &&
    (sub.balances.get(change.asset.name as 'ETH') ?? 0n) + change.asset.delta < 0n
  )
    return false
  const v = marginView(engine, sub, change)
  return v.valueE18 >= v.initialMarginE18
}
