/** The one place a protocol name becomes a client (EXCHANGE_PROTOCOL; docs/exchange.md). */
import { DeriveClient } from '../client/derive-client'
import { DeriveV3Client, type DeriveV3ClientOptions } from './client'

export type ExchangeProtocol = 'v2' | 'v3'

/**
 * v2's client, or v3's behind the same surface: the worker holds either as a DeriveClient.
 * `fundingSubaccountId` is v3's only (the platform's funding subaccount); v2 ignores it.
 */
export function createDeriveClient(protocol: ExchangeProtocol, opts: DeriveV3ClientOptions): DeriveClient {
  return protocol === 'v3' ? new DeriveV3Client(opts) : new DeriveClient(opts)
}
