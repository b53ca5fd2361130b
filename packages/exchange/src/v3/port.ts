/**
 * What the v3 client's helpers (movements.ts, histories.ts) act through: the client's typed wire,
 * its signer and its caches. client.ts builds one per client, so the helpers stay plain functions
 * and the class stays a list of the service's calls.
 */
import type { Address, Hex } from 'viem'
import type { V3MethodName } from './codegen'
import type * as W from './wire.gen'

/** An operation the retired v2 protocol had that v3 does not offer over this API (e.g. a movement stored under v2). */
export class V3UnsupportedError extends Error {
  constructor(what: string, instead: string) {
    super(`${what} is not available on Derive v3: ${instead} (docs/exchange-v3.md)`)
    this.name = 'V3UnsupportedError'
  }
}

export interface SignedV3 {
  nonce: bigint
  signer: Address
  signature: Hex
  signature_expiry_sec: number
}

export interface V3Port {
  /** the owner (EXCHANGE_WALLET_ADDRESS) */
  readonly wallet: Address
  /**
   * The platform's own subaccount holding its funds at the exchange: where fundings come from and
   * releases and fee collections go. Undefined: movements are refused.
   */
  readonly fundingSubaccountId: number | undefined
  /**
   * The most a subaccount's creation may cost, in USD (EXCHANGE_SUBACCOUNT_CREATION_FEE_CAP_USD): signed as
   * `max_fee_usd` of a creation and sent on top of its amount, so the new subaccount receives the amount whole.
   */
  readonly creationFeeCapUsd: string
  call<M extends V3MethodName>(method: M, params: W.V3Wire[M]['params']): Promise<W.V3Wire[M]['result']>
  /** Signs an action for `subaccountId` with the next nanosecond nonce (expiry: now + the client's TTL). */
  sign(subaccountId: number, module: Address, data: Hex, expirySec?: number): Promise<SignedV3>
  /** `public/get_currency` as the wire gives it (cached): protocol asset, decimals, manager ids. */
  wireCurrency(currency: string): Promise<W.Currency>
  /**
   * A history entry's asset as the currency name the service uses: the spec gives a withdrawal's
   * as the protocol asset address (and leaves the others open), so an address of a currency this
   * client has read is named; anything else is kept as it came.
   */
  assetName(asset: string): string
}

/** A JSON integer literal of any size: the spec types transfer and withdrawal nonces as integers, and they exceed 2^53. */
export function exactInteger(n: bigint): number {
  return (JSON as unknown as { rawJSON(text: string): number }).rawJSON(n.toString())
}

/** The funding subaccount, or the configuration error that names it. */
export function fundingSubaccountOf(port: V3Port): number {
  if (port.fundingSubaccountId === undefined)
    throw new Error(
      'v3 movements need the platform funding subaccount (fundingSubaccountId; EXCHANGE_FUNDING_SUBACCOUNT_ID)',
    )
  return port.fundingSubaccountId
}

/** The protocol spot asset of a collateral and its ERC-20 decimals (the first spot entry, as adapt.ts reads it). */
export async function spotAssetOf(port: V3Port, asset_name: string): Promise<{ address: Address; decimals: number }> {
  const spot = (await port.wireCurrency(asset_name)).spot[0]
  if (!spot) throw new Error(`${asset_name} has no spot asset on v3`)
  return { address: spot.address as Address, decimals: spot.erc20.decimals }
}
