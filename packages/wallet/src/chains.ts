/**
 * The chain and token registry: for each deposit chain its RPC, chain id, confirmation
 * depth and accepted tokens, in one place. Built once from Config at start.
 */
import type { Config } from '@wh/config'
import type { Address } from 'viem'

export const CHAIN_NAMES = ['ethereum', 'optimism', 'base', 'arbitrum'] as const
export type ChainName = (typeof CHAIN_NAMES)[number]

export interface TokenInfo {
  readonly symbol: 'ETH' | 'USDC'
  readonly decimals: number
  /** null for the chain's native asset */
  readonly contract: Address | null
  /** smallest deposit credited, in base units (dust below is ignored) */
  readonly minDepositBaseUnits: bigint
}

export interface ChainInfo {
  readonly name: ChainName
  readonly chainId: number
  readonly rpcUrl: string
  /** blocks on top of a deposit's block before it counts (and before a transaction of ours is final) */
  readonly confirmations: number
  /**
   * how deep the deposit watch reads: to the chain's `finalized` block, which no reorg undoes, or
   * (a chain without one, the local node) to `confirmations` below the head
   */
  readonly finality: 'finalized' | 'depth'
  readonly tokens: readonly TokenInfo[]
}

/** Public deployments (chain ids and Circle's native USDC contracts). */
const MAINNET: Record<ChainName, { chainId: number; confirmations: number; usdc: Address }> = {
  ethereum: { chainId: 1, confirmations: 12, usdc: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48' },
  optimism: { chainId: 10, confirmations: 30, usdc: '0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85' },
  base: { chainId: 8453, confirmations: 30, usdc: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913' },
  arbitrum: { chainId: 42161, confirmations: 240, usdc: '0xaf88d065e77c8cC2239327C5EDb3A432268e5831' },
}

export interface ChainOverride {
  chainId?: number
  confirmations?: number
  finality?: ChainInfo['finality']
  usdc?: Address
}

/**
 * The registry for this deployment. `overrides` serve the local run and tests, where one
 * local node stands in for the four chains with its own USDC deployment.
 */
export function buildChainRegistry(
  config: Pick<Config, 'rpcUrls'>,
  overrides: Partial<Record<ChainName, ChainOverride>> = {},
): ReadonlyMap<ChainName, ChainInfo> {
  const registry = new Map<ChainName, ChainInfo>()
  for (const name of CHAIN_NAMES) {
    const base = MAINNET[name]
    const o = overrides[name] ?? {}
    registry.set(
      name,
      Object.freeze({
        name,
        chainId: o.chainId ?? base.chainId,
        rpcUrl: config.rpcUrls[name],
        confirmations: o.confirmations ?? base.confirmations,
        // every public deployment serves the `finalized` tag (Ethereum's Casper FFG; OP Mainnet,
        // Base and Arbitrum One: the L2 blocks whose batches are final on Ethereum); a stand-in
        // node (an override: the local run, tests) is read by depth unless it says otherwise
        finality: o.finality ?? (overrides[name] === undefined ? 'finalized' : 'depth'),
        tokens: Object.freeze([
          Object.freeze({ symbol: 'ETH', decimals: 18, contract: null, minDepositBaseUnits: 1_000_000_000_000_000n }),
          Object.freeze({
            symbol: 'USDC',
            decimals: 6,
            contract: o.usdc ?? base.usdc,
            minDepositBaseUnits: 1_000_000n,
          }),
        ] as const),
      }),
    )
  }
  return registry
}

/**
 * The overrides of this deployment: none in production; with USDC_ADDRESS_LOCAL (local run and
 * tests) the one local node stands in for every chain, so each takes its USDC contract, its chain
 * id (the local run starts the node with EXCHANGE_CHAIN_ID) and 0 confirmations (an automining
 * node only makes blocks for transactions, so any deeper depth would never be reached).
 */
export function configuredChainOverrides(config: {
  readonly usdcAddressLocal: Config['usdcAddressLocal']
  readonly exchange: { readonly chainId: number }
}): Partial<Record<ChainName, ChainOverride>> {
  if (config.usdcAddressLocal === undefined) return {}
  const local: ChainOverride = {
    usdc: config.usdcAddressLocal,
    chainId: config.exchange.chainId,
    confirmations: 0,
    // an automining node's `finalized` block lags its head by dozens of blocks it never makes
    finality: 'depth',
  }
  return Object.fromEntries(CHAIN_NAMES.map((name) => [name, local]))
}
