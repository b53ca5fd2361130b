/** The one place a protocol name becomes a client (EXCHANGE_PROTOCOL; docs/exchange.md). */
import { DeriveClient, type DeriveClientOptions } from '../client/derive-client'
import { DeriveV3Client } from './client'

export type ExchangeProtocol = 'v2' | 'v3'

/** v2's client, or v3's behind the same surface: the worker holds either as a DeriveClient. */
export function createDeriveClient(protocol: ExchangeProtocol, opts: DeriveClientOptions): DeriveClient {
  return protocol === 'v3' ? new DeriveV3Client(opts) : new DeriveClient(opts)
}
