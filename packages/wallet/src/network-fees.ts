/**
 * Network fee estimates (docs/chains.md "Network fee estimate"), one estimator for GET /:asset/fees
 * (@wh/market's `marketReader`) and GET /withdrawals/routes (@wh/withdrawals): gas limit of the
 * transfer × the chain's current max fee per gas (EIP-1559 fee data, or the legacy gas price). Read
 * from the chain's RPC when reachable, cached briefly per chain (a failure too, so an unreachable
 * node does not slow every request); when it is not reachable the estimate is omitted and flagged.
 * It lives with the chain clients it reads through; the market data and the withdrawals import it.
 */
import type { ChainInfo, ChainName } from './chains'
import { createChainClients } from './clients'
import { ETH_TO_EOA_GAS } from './outbound-policy'

/** Gas a plain ETH transfer uses (fixed by the protocol: the outbox's ETH_TO_EOA_GAS). */
export const NATIVE_TRANSFER_GAS = ETH_TO_EOA_GAS
/** Gas budgeted for an ERC-20 transfer (a USDC transfer to a fresh holder uses about 62,000). */
export const ERC20_TRANSFER_GAS = 65_000n
export const FEE_CACHE_MS = 15_000
/** An RPC read for the estimate is abandoned after this long (the route answers without it). */
export const FEE_TIMEOUT_MS = 2_000

export interface FeeEstimator {
  /** max fee per gas in wei, or undefined when the chain is not reachable now */
  feePerGasWei(chain: ChainName): Promise<bigint | undefined>
}

/** Gas limit of a transfer of `token`: native ETH or an ERC-20. */
export function gasLimitOf(token: string): bigint {
  return token === 'ETH' ? NATIVE_TRANSFER_GAS : ERC20_TRANSFER_GAS
}

/** Reads fee data through viem (one public client per chain, built once), cached FEE_CACHE_MS. */
export function rpcFeeEstimator(chains: ReadonlyMap<ChainName, ChainInfo>, now: () => number = Date.now): FeeEstimator {
  const clients = new Map(
    [...chains].map(([name, info]) => [name, createChainClients(info, { timeoutMs: FEE_TIMEOUT_MS }).publicClient]),
  )
  const cache = new Map<ChainName, { at: number; value: Promise<bigint | undefined> }>()
  async function read(chain: ChainName): Promise<bigint | undefined> {
    const client = clients.get(chain)
    if (!client) return undefined
    let timer: NodeJS.Timeout | undefined
    try {
      const timeout = new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), FEE_TIMEOUT_MS)
      })
      const fees = client.estimateFeesPerGas().then(
        (f) => f.maxFeePerGas ?? f.gasPrice,
        () => client.getGasPrice(),
      )
      // a read that loses the race must not turn into an unhandled rejection later
      const settled = fees.catch(() => undefined)
      return await Promise.race([settled, timeout])
    } catch {
      return undefined
    } finally {
      clearTimeout(timer)
    }
  }
  return {
    feePerGasWei(chain) {
      const hit = cache.get(chain)
      if (hit && now() - hit.at < FEE_CACHE_MS) return hit.value
      // the promise is cached, so concurrent requests share one RPC read
      const value = read(chain)
      cache.set(chain, { at: now(), value })
      return value
    },
  }
}
