/**
 * What the L2 route should move now (docs/chains.md "Rebalancing"): each L2 hot wallet is kept at the operator's
 * target (L2_TARGETS) above its chain's requested withdrawals. A surplus of at least the minimum transfer is swept
 * to L1 (then on to the exchange by the L1 deposit); a shortfall of at least the minimum transfer, or any USDC a
 * waiting withdrawal cannot be paid without, is refilled from L1. Each transfer moves at most the per-run limit,
 * and picks CCTP's mode by its fee: fast when Circle's fast fee is within the chain's maximum fee, else standard
 * when that is, else none (the route waits and ops are told).
 */
import type { L2ChainName, L2Target } from '@wh/config'
import { L2_CHAIN_NAMES } from '@wh/config'
import { maxBigint, minBigint } from '@wh/core'
import {
  CCTP_MAX_BURN_BASE_UNITS,
  type ChainName,
  cctpDeployments,
  FINALITY_FAST,
  FINALITY_STANDARD,
  feeAt,
  fetchCctpFees,
  hotWalletUsdc,
  requestedUsdc,
  TOKEN_MESSENGER_V2_ABI,
} from '@wh/wallet'
import type { HotWalletDeps } from '../deps'
import { openTransfer } from './store'
import type { CctpDeps } from './transfer'

/** The exchange's L1, where L2 money goes and refills come from: the local run's and production's Ethereum. */
export const L1: ChainName = 'ethereum'

const cache = new WeakMap<object, CctpDeps>()

/** The route's dependencies from the worker's (built once per deps: the deployments follow the config). */
export function cctpDepsOf(deps: HotWalletDeps): CctpDeps {
  const cached = cache.get(deps)
  if (cached) return cached
  const built: CctpDeps = {
    ...deps,
    cctp: cctpDeployments(deps.config, deps.registry),
    attestation: { baseUrl: deps.config.cctp.attestationUrl },
  }
  cache.set(deps, built)
  return built
}

export function targetOf(deps: Pick<HotWalletDeps, 'config'>, chain: L2ChainName): L2Target {
  return deps.config.l2Targets[chain]
}

/** A chain's hot wallet: what it holds, what its requested withdrawals take, and what is free of them. */
export async function walletPosition(
  deps: Pick<HotWalletDeps, 'clients' | 'hotWallet' | 'sql'>,
  chain: ChainName,
): Promise<{ balance: bigint; requested: bigint; free: bigint }> {
  const [balance, requested] = await Promise.all([hotWalletUsdc(deps, chain), requestedUsdc(deps, chain)])
  return { balance, requested, free: balance - requested }
}

/** What `chain` should receive from L1 now: the shortfall from its target, at least what waiting withdrawals lack. */
export function refillNeedOf(t: L2Target, p: { balance: bigint; requested: bigint; free: bigint }): bigint {
  const waiting = p.requested - p.balance
  const deficit = t.target - p.free
  if (waiting > 0n) return minBigint(maxBigint(deficit, waiting), maxBigint(t.maxPerRun, waiting))
  return deficit >= t.minTransfer && deficit > 0n ? minBigint(deficit, t.maxPerRun) : 0n
}

/**
 * What one burn carries: the gross amount, within the run's cap and Circle's per-burn limit (a larger burn
 * reverts on the source chain); a refill grossed up past the limit delivers the rest on the next run.
 */
export function burnAmountOf(gross: bigint, cap: bigint | undefined): bigint {
  return minBigint(cap === undefined ? gross : minBigint(gross, cap), CCTP_MAX_BURN_BASE_UNITS)
}

/** What `chain` should send to L1 now: its surplus above the target, when at least the minimum transfer. */
export function sweepAmountOf(t: L2Target, p: { free: bigint }): bigint {
  const surplus = p.free - t.target
  if (surplus <= 0n || surplus < t.minTransfer) return 0n
  return minBigint(minBigint(surplus, t.maxPerRun), CCTP_MAX_BURN_BASE_UNITS)
}

/**
 * The USDC the L2s need from L1 now, for those without a refill under way: the L1 keeps it back from the exchange
 * deposit, and the treasury withdraws it from the exchange when the L1 hot wallet lacks it.
 */
export async function l2Demand(deps: Pick<HotWalletDeps, 'sql' | 'clients' | 'hotWallet' | 'config'>): Promise<bigint> {
  // the L2s side by side: one that does not answer costs the run its RPC's timeout once, not once per chain
  const needs = await Promise.all(
    L2_CHAIN_NAMES.map(async (chain) => {
      if (!deps.clients.has(chain) || (await openTransfer(deps.sql, L1, chain))) return 0n
      try {
        return refillNeedOf(targetOf(deps, chain), await walletPosition(deps, chain))
      } catch {
        // a chain that does not answer asks for nothing this run (its refill tick waits for it too)
        return 0n
      }
    }),
  )
  return needs.reduce((a, b) => a + b, 0n)
}

export type ModeChoice =
  | {
      readonly minFinality: number
      readonly maxFee: bigint
      readonly expectedFee: bigint
      /** the mode's fee rate, hundredths of a basis point (what a refill grosses its amount up by) */
      readonly rate: bigint
    }
  | { readonly refused: string }

/** What to burn so that `net` arrives after a fee of `rate` hundredths of a bp taken from the burned amount. */
export function grossFor(net: bigint, rate: bigint): bigint {
  if (rate === 0n) return net
  // the fee is taken from the gross and rounded up: the smallest gross whose gross − fee(gross) ≥ net. Start at
  // net / (1 − rate) rounded up (within a unit or two of it), then step: a fee-on-fee walk from net + fee(net) took
  // fee(fee) steps, millions for a refill of millions
  const whole = 1_000_000n
  let gross = (net * whole + (whole - rate) - 1n) / (whole - rate)
  while (gross - feeAt(gross, rate) < net) gross += 1n
  while (gross > net && gross - 1n - feeAt(gross - 1n, rate) >= net) gross -= 1n
  return gross
}

/** The standard-transfer fee the source's TokenMessengerV2 enforces at the burn (0 where it has none). */
async function onChainMinFee(deps: CctpDeps, source: ChainName, amount: bigint): Promise<bigint> {
  const d = deps.cctp.get(source)
  const c = deps.clients.get(source)
  if (!d || !c) return 0n
  try {
    return await c.publicClient.readContract({
      address: d.tokenMessenger,
      abi: TOKEN_MESSENGER_V2_ABI,
      functionName: 'getMinFeeAmount',
      args: [amount],
    })
  } catch {
    // a messenger without the fee switch (Circle's before it) enforces none
    return 0n
  }
}

/**
 * Fast or standard for `amount` on `source → dest` under the chain's maximum fee `cap`, from Circle's fee read
 * (throws when it cannot be read: the route waits) and the messenger's on-chain minimum.
 */
export async function chooseMode(
  deps: CctpDeps,
  route: { source: ChainName; dest: ChainName },
  amount: bigint,
  cap: bigint,
): Promise<ModeChoice> {
  const source = deps.cctp.get(route.source)
  const dest = deps.cctp.get(route.dest)
  if (!source || !dest) return { refused: `no CCTP deployment for ${route.source} → ${route.dest}` }
  const maxFee = cap < amount ? cap : amount - 1n
  const fees = await fetchCctpFees(deps.attestation, { sourceDomain: source.domain, destinationDomain: dest.domain })
  const onChain = await onChainMinFee(deps, route.source, amount)
  const fast = maxBigint(feeAt(amount, fees.fast), onChain)
  const standard = maxBigint(feeAt(amount, fees.standard), onChain)
  if (fast <= maxFee) return { minFinality: FINALITY_FAST, maxFee, expectedFee: fast, rate: fees.fast }
  if (standard <= maxFee) return { minFinality: FINALITY_STANDARD, maxFee, expectedFee: standard, rate: fees.standard }
  return { refused: `CCTP fees above the maximum of ${maxFee}: fast ${fast}, standard ${standard} (base units)` }
}
