/**
 * viem clients per chain of the registry: one public and one wallet client each, built once at
 * start (in main.ts, never at import time) and shared. The wallet clients hold no account: each
 * call names the account that signs (a deposit address's own key, the gas wallet, the hot wallet).
 */
import {
  type Chain,
  createPublicClient,
  createWalletClient,
  defineChain,
  type HttpTransportConfig,
  http,
  type PublicClient,
  type Transport,
  type WalletClient,
} from 'viem'
import type { ChainInfo, ChainName } from './chains'

/** JSON-RPC requests sent together in one HTTP POST (viem's http transport batching). */
export const RPC_BATCH_SIZE = 100
/** One HTTP request's deadline; an RPC outage fails the tick, which retries with backoff. */
export const RPC_TIMEOUT_MS = 30_000
export const RPC_RETRY_COUNT = 2

export interface ChainClients {
  readonly info: ChainInfo
  readonly chain: Chain
  readonly publicClient: PublicClient<Transport, Chain>
  readonly walletClient: WalletClient<Transport, Chain>
}

export interface ClientOptions {
  /** e.g. to count HTTP requests in a benchmark; passed to viem's http transport */
  onFetchRequest?: HttpTransportConfig['onFetchRequest']
  batchSize?: number
  timeoutMs?: number
}

/** The viem chain definition of a registry entry. */
export function viemChain(info: ChainInfo): Chain {
  return defineChain({
    id: info.chainId,
    name: info.name,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [info.rpcUrl] } },
  })
}

/**
 * The transport every client of a chain uses: HTTP with JSON-RPC batching, so the requests a
 * scan issues together (blocks, receipts, log chunks) travel in one round trip.
 */
export function chainTransport(info: ChainInfo, opts: ClientOptions = {}): Transport {
  return http(info.rpcUrl, {
    batch: { batchSize: opts.batchSize ?? RPC_BATCH_SIZE, wait: 0 },
    timeout: opts.timeoutMs ?? RPC_TIMEOUT_MS,
    retryCount: RPC_RETRY_COUNT,
    ...(opts.onFetchRequest ? { onFetchRequest: opts.onFetchRequest } : {}),
  })
}

/** A public and a wallet client for one chain. */
export function createChainClients(info: ChainInfo, opts: ClientOptions = {}): ChainClients {
  const chain = viemChain(info)
  const transport = chainTransport(info, opts)
  return Object.freeze({
    info,
    chain,
    publicClient: createPublicClient({ chain, transport }),
    walletClient: createWalletClient({ chain, transport }),
  })
}

/**
 * One set of clients per chain of the registry. Build once per process.
 *
 * @example
 *   const clients = buildChainClients(buildChainRegistry(config))
 *   const head = await clients.get('base')!.publicClient.getBlockNumber()
 */
export function buildChainClients(
  registry: ReadonlyMap<ChainName, ChainInfo>,
  opts: ClientOptions = {},
): ReadonlyMap<ChainName, ChainClients> {
  const clients = new Map<ChainName, ChainClients>()
  for (const [name, info] of registry) clients.set(name, createChainClients(info, opts))
  return clients
}
