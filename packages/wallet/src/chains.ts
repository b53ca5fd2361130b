/**
 * The chain and token registry: for each deposit chain its RPC, chain id, confirmation
 * depth and accepted tokens, in one place. Built once from Config at start.
 */
import { CHAIN_NAMES, type ChainName, type Config } from '@wh/config'
import type { Address } from 'viem'

export { CHAIN_NAMES, type ChainName }

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

/** Two chain names under one chain id: one network would be credited twice and share one wallet's nonces. */
export class DuplicateChainIdError extends Error {
  constructor(
    readonly chainId: number,
    readonly names: readonly ChainName[],
  ) {
    super(`${names.join(' and ')} have the same chain id ${chainId}: each chain needs a network of its own`)
    this.name = 'DuplicateChainIdError'
  }
}

/**
 * The registry for this deployment. `overrides` serve the local run and tests, where a local node
 * stands in for a chain with its own id and USDC deployment. Two names under one chain id are refused
 * (DuplicateChainIdError): the deposit watch would credit each transfer twice, and the two names'
 * transactions would share one nonce sequence.
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
  const byId = new Map<number, ChainName>()
  for (const c of registry.values()) {
    const first = byId.get(c.chainId)
    if (first) throw new DuplicateChainIdError(c.chainId, [first, c.name])
    byId.set(c.chainId, c.name)
  }
  return registry
}

/**
 * The overrides of this deployment: none in production; in the local run and tests (USDC_ADDRESS_LOCAL_* and
 * CHAIN_ID_LOCAL_*) each chain is its own local node, with its chain id, its TestUSDC and 0 confirmations (an
 * automining node only makes blocks for transactions, so any deeper depth would never be reached).
 */
export function configuredChainOverrides(
  config: Pick<Config, 'localChains'>,
): Partial<Record<ChainName, ChainOverride>> {
  const local = config.localChains
  if (local === undefined) return {}
  return Object.fromEntries(
    CHAIN_NAMES.map((name) => [
      name,
      {
        usdc: local[name].usdc,
        chainId: local[name].chainId,
        confirmations: 0,
        // an automining node's `finalized` block lags its head by dozens of blocks it never makes
        finality: 'depth',
      } satisfies ChainOverride,
    ]),
  )
}
