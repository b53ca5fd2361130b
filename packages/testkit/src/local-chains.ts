/**
 * One local node per chain (docs/chains.md "Local run: four chains"): the local run, the tests of
 * cross-chain behaviour and the Compose stack each give Ethereum, Optimism, Base and Arbitrum an anvil of
 * their own under a chain id of their own, so nonces, deposit scans and the start-up identity check are
 * per chain as on the public networks. The Ethereum node is the exchange's L1 (EXCHANGE_CHAIN_ID).
 */
import { CHAIN_NAMES, type ChainName, L2_CHAIN_NAMES } from '@wh/config'
import { type RunningChain, type StartChainOptions, startChain } from './chain'

/** The local nodes' chain ids: Ethereum's is the exchange's L1 (EXCHANGE_CHAIN_ID, 901), the others follow it. */
export const LOCAL_CHAIN_IDS: Readonly<Record<ChainName, number>> = Object.freeze({
  ethereum: 901,
  optimism: 902,
  base: 903,
  arbitrum: 904,
})

export type LocalChains = Readonly<Record<ChainName, RunningChain>> & {
  /** stops every node */
  stop(): Promise<void>
}

export interface StartLocalChainsOptions extends Omit<StartChainOptions, 'chainId' | 'port'> {
  /** chain ids other than LOCAL_CHAIN_IDS (distinct, or the registry refuses them) */
  readonly ids?: Partial<Record<ChainName, number>>
  /** fixed ports (the local run); default: each node picks a free one */
  readonly ports?: Partial<Record<ChainName, number>>
}

/**
 * Starts the four nodes side by side (each ready in well under a second; four take about as long as
 * one on two cores). A node that fails to start stops the others.
 *
 * @example
 *   const chains = await startLocalChains()
 *   const usdc = await deployTestUsdcs(chains, TEST_PRIVATE_KEYS[0]) // @wh/wallet
 *   const ctx = await integrationContext(localChainsEnv(chains, usdc))
 */
export async function startLocalChains(o: StartLocalChainsOptions = {}): Promise<LocalChains> {
  const { ids, ports, ...rest } = o
  const started = await Promise.allSettled(
    CHAIN_NAMES.map((name) =>
      startChain({
        ...rest,
        chainId: ids?.[name] ?? LOCAL_CHAIN_IDS[name],
        ...(ports?.[name] !== undefined && { port: ports[name] }),
      }),
    ),
  )
  const up = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []))
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected')
  if (failed) {
    await Promise.all(up.map((c) => c.stop()))
    throw failed.reason
  }
  const [ethereum, optimism, base, arbitrum] = up as [RunningChain, RunningChain, RunningChain, RunningChain]
  return {
    ethereum,
    optimism,
    base,
    arbitrum,
    stop: async () => {
      await Promise.all(up.map((c) => c.stop()))
    },
  }
}

/**
 * The environment naming the four nodes: each chain's RPC, the L2s' chain ids, each chain's TestUSDC, and
 * the Ethereum node as the exchange's chain (EXCHANGE_CHAIN_RPC_URL, EXCHANGE_CHAIN_ID).
 */
export function localChainsEnv(
  chains: Readonly<Record<ChainName, { readonly rpcUrl: string; readonly chainId: number }>>,
  usdc: Readonly<Record<ChainName, string>>,
): Record<string, string> {
  const env: Record<string, string> = {
    EXCHANGE_CHAIN_RPC_URL: chains.ethereum.rpcUrl,
    EXCHANGE_CHAIN_ID: String(chains.ethereum.chainId),
  }
  for (const name of CHAIN_NAMES) {
    env[`RPC_URL_${name.toUpperCase()}`] = chains[name].rpcUrl
    env[`USDC_ADDRESS_LOCAL_${name.toUpperCase()}`] = usdc[name]
  }
  for (const name of L2_CHAIN_NAMES) env[`CHAIN_ID_LOCAL_${name.toUpperCase()}`] = String(chains[name].chainId)
  return env
}
