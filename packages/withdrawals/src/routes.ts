/**
 * The routes a withdrawal can take (GET /withdrawals/routes): every chain and asset, with the
 * bounds a request meets (request.ts `withdrawalBounds`, at the feed's price) and the network fee
 * the platform would pay now.
 */
import { type ChainInfo, type FeeEstimator, gasLimitOf, type TokenInfo } from '@wh/wallet'
import { PriceUnavailableError } from './errors'
import { type WithdrawalRequestDeps, withdrawalBounds } from './request'

export interface WithdrawalRouteInfo {
  readonly info: ChainInfo
  readonly token: TokenInfo
  /** undefined while the feed has no recent price of the asset (its requests answer 503 PRICE_UNAVAILABLE) */
  readonly bounds: { readonly priceUsd: string; readonly min: bigint; readonly max: bigint } | undefined
  /** gas of one transfer of the asset */
  readonly gasLimit: bigint
  /** the chain's max fee per gas in wei; undefined when its RPC does not answer now */
  readonly feePerGasWei: bigint | undefined
}

/**
 * Every chain's assets, in the registry's order. The chains' fee reads run in parallel (one slow
 * RPC bounds the answer, not their sum), and the price is read once per asset, not per chain.
 */
export async function withdrawalRoutes(
  deps: Pick<WithdrawalRequestDeps, 'chains' | 'prices' | 'limits'>,
  fees: FeeEstimator,
): Promise<WithdrawalRouteInfo[]> {
  const chains = [...deps.chains.values()]
  const feeByChain = await Promise.all(chains.map((c) => fees.feePerGasWei(c.name)))
  const boundsByAsset = new Map<string, Promise<WithdrawalRouteInfo['bounds']>>()
  const boundsOnce = (token: TokenInfo) => {
    let b = boundsByAsset.get(token.symbol)
    if (!b) {
      b = withdrawalBounds(deps, token.symbol, token.decimals).catch((err: unknown) => {
        if (err instanceof PriceUnavailableError) return undefined
        throw err
      })
      boundsByAsset.set(token.symbol, b)
    }
    return b
  }
  const routes: WithdrawalRouteInfo[] = []
  for (const [i, info] of chains.entries())
    for (const token of info.tokens)
      routes.push({
        info,
        token,
        bounds: await boundsOnce(token),
        gasLimit: gasLimitOf(token.symbol),
        feePerGasWei: feeByChain[i],
      })
  return routes
}
