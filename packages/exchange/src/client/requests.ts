/**
 * What the Derive client takes and hands back (./derive-client.ts): its options, the requests the
 * service builds (orders, movements), the signed movement it stores, ticker updates and history
 * windows. Shapes only, besides `tradeDataOf`, which maps an order onto what it signs.
 */
import type { Clock } from '@wh/core'
import type { Address, Hex } from 'viem'
import { toE18 } from '../protocol/decimal'
import type { TradeData } from '../protocol/module-data'
import type * as T from '../protocol/types'
import type { ExchangeLogger } from './logger'
import type { RetryPolicy, Sleep } from './retry'

/** Derive wants an expiry more than five minutes out; one hour leaves room for slow queues. */
export const DEFAULT_SIGNATURE_TTL_SEC = 3_600

/** The finest amount v3 takes: 12 decimal places. */
export const V3_AMOUNT_DECIMALS = 12

export interface DeriveClientOptions {
  /** EXCHANGE_HTTP_URL: the v3 base (…/v3) */
  httpUrl: string
  /** EXCHANGE_WS_URL: the v3 socket (…/v3/ws) */
  wsUrl?: string
  /** EXCHANGE_WALLET_ADDRESS: the owner, the platform's own L1 address */
  wallet: Address
  /**
   * The trading and funding key (SESSION_PRIVATE_KEY): orders, transfers, reads. During a renewal
   * the current and the next key (…_NEXT); the client signs with the registered one that lives
   * longest (key-ring.ts).
   */
  sessionKey: Hex | readonly Hex[]
  /** The payout key(s) (EXCHANGE_PAYOUT_SESSION_KEY, …_NEXT): L1 withdrawals only. Without: the trading key signs them. */
  payoutSessionKey?: Hex | readonly Hex[]
  /** EXCHANGE_CHAIN_ID: the v3 domain's chain (1 or 11155111) */
  chainId: number
  /**
   * The platform's own subaccount that holds its funds at the exchange (EXCHANGE_FUNDING_SUBACCOUNT_ID):
   * fundings are transfers out of it, releases and fee collections transfers into it. Without it
   * the movements and their histories are refused.
   */
  fundingSubaccountId?: number
  /**
   * The most a subaccount's creation may cost, in USD (EXCHANGE_SUBACCOUNT_CREATION_FEE_CAP_USD); `0` (the default)
   * signs creations with no fee, which Derive refuses (docs/exchange-v3.md "Movements on v3").
   */
  subaccountCreationFeeCapUsd?: string
  clock?: Clock
  logger?: ExchangeLogger
  retry?: RetryPolicy
  timeoutMs?: number
  signatureTtlSec?: number
  fetch?: typeof fetch
  sleep?: Sleep
}

export interface OrderRequest {
  subaccount_id: number
  instrument_name: string
  direction: 'buy' | 'sell'
  amount: string
  limit_price: string
  /** Max fee per unit of amount, in USD. */
  max_fee: string
  time_in_force?: 'gtc' | 'post_only' | 'fok' | 'ioc'
  order_type?: 'limit' | 'market'
  label?: string
  reduce_only?: boolean
  mmp?: boolean
  signature_expiry_sec?: number
}

/** What an order signs, from the request and its instrument. */
export function tradeDataOf(
  inst: Pick<T.Instrument, 'base_asset_address' | 'base_asset_sub_id'>,
  p: Pick<OrderRequest, 'limit_price' | 'amount' | 'max_fee' | 'subaccount_id' | 'direction'>,
): TradeData {
  return {
    asset: inst.base_asset_address as Address,
    subId: BigInt(inst.base_asset_sub_id),
    limitPriceE18: toE18(p.limit_price),
    amountE18: toE18(p.amount),
    maxFeeE18: toE18(p.max_fee),
    recipientId: BigInt(p.subaccount_id),
    isBid: p.direction === 'buy',
  }
}

/** A collateral movement to sign (see `DeriveClient.signTransfer`). */
export type TransferRequest = (
  | { method: 'create_subaccount'; margin_type?: 'SM' | 'PM' | 'PM2'; currency?: string }
  | { method: 'deposit'; subaccount_id: number }
  | { method: 'withdraw'; subaccount_id: number }
) & {
  asset_name: string
  /** decimal string in the asset (at most its ERC20 decimals) */
  amount: string
  /** defaults to now + the client's signature TTL; the exchange wants more than five minutes ahead */
  signature_expiry_sec?: number
}

/**
 * The method and signed params of a movement, as sent: plain JSON, safe to store (never to log).
 * `method` names the movement (every one is sent as transfer_spot); the nanosecond nonce is a
 * decimal string, which JSON and Postgres keep exact. Rows stored by the retired v2 protocol carry
 * a number and are refused on sending (V3UnsupportedError).
 */
export interface SignedTransfer {
  method: 'create_subaccount' | 'deposit' | 'withdraw'
  params: Record<string, unknown> & {
    nonce: number | string
    signer: Address
    signature_expiry_sec: number
    signature: Hex
  }
}

/** One ticker notification of `subscribeTicker`: the exchange's time and the ticker in the service's shape. */
export interface TickerUpdate {
  timestamp: number
  ticker: T.Ticker
}

export interface HistoryWindow {
  subaccount_id: number
  start_timestamp?: number
  end_timestamp?: number
}
