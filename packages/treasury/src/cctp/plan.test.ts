/**
 * What the operator's L2 targets make the route move (docs/chains.md "Rebalancing"): the surplus above the target
 * goes to L1, the shortfall comes from L1, neither below the minimum transfer nor above the per-run limit, except
 * that a waiting withdrawal always gets what it lacks; a refill is grossed up by its fee so the need arrives whole.
 */
import type { L2Target } from '@wh/config'
import { CCTP_MAX_BURN_BASE_UNITS, feeAt } from '@wh/wallet'
import { describe, expect, it } from 'vitest'
import { burnAmountOf, grossFor, refillNeedOf, sweepAmountOf } from './plan'

const U = (n: number) => BigInt(n) * 1_000_000n
const target: L2Target = { target: U(1_000), minTransfer: U(10), maxFee: U(5), maxPerRun: U(5_000) }
const at = (balance: bigint, requested = 0n) => ({ balance, requested, free: balance - requested })

describe('rebalancing toward the operator’s per-chain targets', () => {
  it('sweeps the surplus above the target (what requested withdrawals take is not surplus), at most the per-run limit', () => {
    expect(sweepAmountOf(target, at(U(1_500)))).toBe(U(500))
    expect(sweepAmountOf(target, at(U(1_500), U(400)))).toBe(U(100))
    expect(sweepAmountOf(target, at(U(20_000)))).toBe(U(5_000))
    expect(sweepAmountOf({ ...target, maxPerRun: 2n ** 128n }, at(2n ** 100n))).toBe(CCTP_MAX_BURN_BASE_UNITS)
  })

  it('a burn never exceeds the run’s cap nor Circle’s per-burn limit, even a refill grossed up past it', () => {
    expect(burnAmountOf(U(1_005), undefined)).toBe(U(1_005))
    expect(burnAmountOf(U(1_005), U(1_000))).toBe(U(1_000))
    const need = refillNeedOf({ ...target, maxPerRun: 2n ** 128n }, at(0n, 2n ** 100n))
    expect(need).toBeGreaterThan(CCTP_MAX_BURN_BASE_UNITS)
    expect(burnAmountOf(grossFor(need, 130n), undefined)).toBe(CCTP_MAX_BURN_BASE_UNITS)
    expect(burnAmountOf(grossFor(U(100), 130n), 2n ** 128n)).toBe(grossFor(U(100), 130n))
  })

  it('moves nothing below the minimum transfer, nor at or below the target', () => {
    expect(sweepAmountOf(target, at(U(1_009)))).toBe(0n)
    expect(sweepAmountOf(target, at(U(1_010)))).toBe(U(10))
    expect(sweepAmountOf(target, at(U(1_000)))).toBe(0n)
    expect(sweepAmountOf(target, at(U(10)))).toBe(0n)
    expect(refillNeedOf(target, at(U(991)))).toBe(0n)
    expect(refillNeedOf(target, at(U(990)))).toBe(U(10))
    expect(refillNeedOf(target, at(U(1_200)))).toBe(0n)
  })

  it('refills the shortfall from the target, at most the per-run limit', () => {
    expect(refillNeedOf(target, at(U(400)))).toBe(U(600))
    expect(refillNeedOf(target, at(U(400), U(300)))).toBe(U(900))
    expect(refillNeedOf({ ...target, target: U(20_000) }, at(0n))).toBe(U(5_000))
  })

  it('always brings what a waiting withdrawal lacks: below the minimum transfer, above the per-run limit', () => {
    // 3 USDC short of a withdrawal, target 0: below the 10 USDC minimum, refilled anyway
    expect(refillNeedOf({ ...target, target: 0n }, at(U(57), U(60)))).toBe(U(3))
    // 9,000 short: above the 5,000 limit per run, the whole of what the withdrawal lacks
    expect(refillNeedOf(target, at(0n, U(9_000)))).toBe(U(9_000))
    // short by 60, target 1,000: the withdrawal and the target, within the limit
    expect(refillNeedOf(target, at(0n, U(60)))).toBe(U(1_060))
  })

  it('grosses a refill up by its fee, to the least amount whose net covers the need', () => {
    for (const [need, rate] of [
      [U(60), 130n],
      [U(1_060), 100n],
      [1n, 130n],
      [U(9_999) + 7n, 130n],
      [U(5), 0n],
      [U(10_000_000), 130n],
      [2n ** 100n, 9_999n],
    ] as const) {
      const gross = grossFor(need, rate)
      expect(gross - feeAt(gross, rate)).toBeGreaterThanOrEqual(need)
      expect(gross - 1n - feeAt(gross - 1n, rate)).toBeLessThan(need)
    }
    expect(grossFor(U(60), 0n)).toBe(U(60))
  })
})
