/**
 * What the v3 WebSocket server keeps per connection, a leaf: server.ts serves the connection and
 * private-channels.ts pushes to it, and the server runs the pushes.
 */
import type { WebSocket } from 'ws'
import type { Signer } from '../session-keys'
import type { SimWallet } from '../sim-types'

/** What the private channels last pushed to one connection (private-channels.ts). */
export interface PrivateFeeds {
  /** channel → what it last pushed, per order id or balance name */
  readonly seen: Map<string, Map<string, string>>
}

/** One WebSocket connection: its socket, who logged in on it, and what it follows. */
export interface V3WsConn {
  ws: WebSocket
  wallet: SimWallet | null
  signer: Signer | null
  ip: string
  channels: Set<string>
  /** what the private channels last pushed (private-channels.ts) */
  feeds: PrivateFeeds
}
