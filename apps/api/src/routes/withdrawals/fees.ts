/**
 * Network fee estimates for GET /withdrawals/routes. The estimator moved to @wh/market
 * (network-fees.ts) so GET /:asset/fees shares it; re-exported here for this route.
 */
export {
  ERC20_TRANSFER_GAS,
  FEE_CACHE_MS,
  FEE_TIMEOUT_MS,
  type FeeEstimator,
  gasLimitOf,
  NATIVE_TRANSFER_GAS,
  rpcFeeEstimator,
} from '@wh/market'
