/**
 * What a WebSocket session of the simulator does the same way on v2 and v3 (docs/exchange-v3.md):
 * the login's answer (the wallet's subaccount ids) and `subscribe`/`unsubscribe` of a connection's
 * channels, each channel checked by the protocol's own test.
 */
import type { SimEngine } from './engine'

/** The ids of the wallet's subaccounts: what `public/login` answers. */
export function subaccountIdsOf(engine: SimEngine, wallet: string): number[] {
  return [...engine.subaccounts.values()].filter((s) => s.wallet === wallet).map((s) => s.id)
}

/** Applies `subscribe` or `unsubscribe` to `channels`; the answer's `result`. */
export function applySubscription(
  method: 'subscribe' | 'unsubscribe',
  params: { channels?: unknown },
  channels: Set<string>,
  served: (channel: string) => boolean,
): { status: Record<string, string>; current_subscriptions: string[] } {
  const asked = Array.isArray(params.channels) ? params.channels.map(String) : []
  const status: Record<string, string> = {}
  for (const c of asked) {
    if (method === 'unsubscribe') channels.delete(c)
    else if (served(c)) channels.add(c)
    status[c] = method === 'unsubscribe' || channels.has(c) ? 'ok' : 'invalid channel'
  }
  return { status, current_subscriptions: [...channels] }
}
