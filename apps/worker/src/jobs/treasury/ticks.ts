/**
 * The treasury queue's ticks (docs/chains.md "Bridge", "Treasury", "Rebalancing"); what they run is @wh/treasury's.
 * Names, queue and periods are the job schedulers' keys in Redis: they do not change.
 */
import { L2_CHAIN_NAMES, type L2ChainName } from '@wh/config'
import { checkHotWalletEth, runBridgeTick, runCctpRefillTick, runTreasuryTick, TREASURY_CHAIN } from '@wh/treasury'
import { CHAIN_NAMES, type ChainName } from '@wh/wallet'
import type { TickDefinition } from '../../ticks'

export const BRIDGE_EVERY_MS = 60_000
export const CCTP_REFILL_EVERY_MS = 30_000
export const HOT_WALLET_ETH_EVERY_MS = 5 * 60_000
export const TREASURY_EVERY_MS = 60_000
export const bridgeTickName = (chain: ChainName) => `bridge-${chain}`
export const cctpRefillTickName = (chain: L2ChainName) => `cctp-refill-${chain}`
export const TREASURY_TICK_NAME = `treasury-${TREASURY_CHAIN}`

/** One bridge per source chain: the hot wallet's surplus to the exchange (an L2's to L1 over CCTP first). */
export const bridgeTicks: readonly TickDefinition[] = CHAIN_NAMES.map((chain) => ({
  name: bridgeTickName(chain),
  queue: 'treasury',
  everyMs: BRIDGE_EVERY_MS,
  process: (_job, ctx) => runBridgeTick(ctx.deps, chain, ctx.log),
}))

/** Each L2 hot wallet refilled from L1 over CCTP when short of its target or of a waiting withdrawal. */
export const cctpRefillTicks: readonly TickDefinition[] = L2_CHAIN_NAMES.map((chain) => ({
  name: cctpRefillTickName(chain),
  queue: 'treasury',
  everyMs: CCTP_REFILL_EVERY_MS,
  process: (_job, ctx) => runCctpRefillTick(ctx.deps, chain, ctx.log),
}))

/** Every hot wallet's ETH against HOT_WALLET_ETH_ALERT. */
export const hotWalletEthTick: TickDefinition = {
  name: 'hot-wallets-eth',
  queue: 'treasury',
  everyMs: HOT_WALLET_ETH_EVERY_MS,
  process: async (_job, ctx) => ({ low: await checkHotWalletEth(ctx.deps) }),
}

/** The Ethereum hot wallet refilled from the funding subaccount (`off` without the outbox's address). */
export const treasuryTick: TickDefinition = {
  name: TREASURY_TICK_NAME,
  queue: 'treasury',
  everyMs: TREASURY_EVERY_MS,
  process: (_job, ctx) => runTreasuryTick(ctx.deps, ctx.log),
}
