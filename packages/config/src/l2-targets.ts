/**
 * L2_TARGETS: what the operator sets for each L2 hot wallet (docs/chains.md "Rebalancing"). Each entry is
 * `chain:target:minTransfer:maxFee:maxPerRun`, USDC decimal amounts, entries separated by commas:
 *
 * - target: the USDC the hot wallet keeps, above its chain's requested withdrawals; more is swept to L1 over
 *   CCTP, less is refilled from L1;
 * - minTransfer: a smaller surplus or shortfall does not move (a refill a waiting withdrawal needs always does);
 * - maxFee: the most one CCTP transfer may pay Circle (a fast transfer costing more goes standard; a route
 *   where both cost more waits, with an alert);
 * - maxPerRun: the most one transfer moves.
 *
 * An L2 not named takes the defaults: target BRIDGE_RETAIN_USDC, minTransfer 10, maxFee 5, maxPerRun 50,000.
 */
import { toBaseUnits, USDC_DECIMALS } from '@wh/core'
import { L2_CHAIN_NAMES } from './chain-names'
import type { Check } from './env-checks'

export type L2ChainName = (typeof L2_CHAIN_NAMES)[number]

/** One L2's targets, in USDC base units. */
export interface L2Target {
  readonly target: bigint
  readonly minTransfer: bigint
  readonly maxFee: bigint
  readonly maxPerRun: bigint
}

const AMOUNT = /^[0-9]+(\.[0-9]{1,6})?$/

/** A checked decimal USDC amount in base units (6 decimals), exactly. */
export function usdcUnits(v: string): bigint {
  return toBaseUnits(v, USDC_DECIMALS)
}

function parseEntry(entry: string): [L2ChainName, L2Target] | string {
  const [chain, ...fields] = entry.trim().split(':')
  if (!(L2_CHAIN_NAMES as readonly string[]).includes(chain ?? ''))
    return `names ${chain || 'no chain'}: each entry starts with optimism, base or arbitrum`
  if (fields.length !== 4 || !fields.every((f) => AMOUNT.test(f)))
    return `${chain}: needs target:minTransfer:maxFee:maxPerRun, USDC amounts with at most 6 decimals`
  const [target, minTransfer, maxFee, maxPerRun] = fields.map(usdcUnits) as [bigint, bigint, bigint, bigint]
  if (maxPerRun === 0n) return `${chain}: maxPerRun must be above 0`
  return [chain as L2ChainName, { target, minTransfer, maxFee, maxPerRun }]
}

export const l2TargetsCheck: Check = (v) => {
  const seen = new Set<string>()
  for (const entry of v.split(',').filter((e) => e.trim() !== '')) {
    const parsed = parseEntry(entry)
    if (typeof parsed === 'string') return parsed
    if (seen.has(parsed[0])) return `${parsed[0]} is named twice`
    seen.add(parsed[0])
  }
  return undefined
}

/** Every L2's targets: the entries of a checked L2_TARGETS, the defaults for the others. */
export function parseL2Targets(v: string, retain: bigint): Readonly<Record<L2ChainName, L2Target>> {
  const out = Object.fromEntries(
    L2_CHAIN_NAMES.map((c) => [
      c,
      { target: retain, minTransfer: 10_000_000n, maxFee: 5_000_000n, maxPerRun: 50_000_000_000n } as L2Target,
    ]),
  ) as Record<L2ChainName, L2Target>
  for (const entry of v.split(',').filter((e) => e.trim() !== '')) {
    const parsed = parseEntry(entry)
    if (typeof parsed !== 'string') out[parsed[0]] = parsed[1]
  }
  return out
}
