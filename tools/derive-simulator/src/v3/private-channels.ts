/**
 * The private channels Derive's SDK subscribes to (subscriptions.asyncapi.json): `{subaccount_id}.orders`
 * pushes the subaccount's orders that changed (an array of `Order`), `{subaccount_id}.balances` its
 * balances and positions that changed (an array of `BalanceUpdate`). A connection must be logged in as
 * the subaccount's owner (or one of its keys) to subscribe. The simulator pushes after every call it
 * serves and every move of its market or clock; what a connection already saw is not sent again. The
 * `update_type` of a balance update is `trade` whatever moved it: the simulator does not tell them apart.
 */
import { fromE18 } from '@wh/exchange'
import type { SimEngine } from '../engine'
import type { SimSubaccount } from '../sim-types'
import { orderV3 } from './views'
import type { PrivateFeeds, V3WsConn } from './ws-conn'

export type { PrivateFeeds } from './ws-conn'

export const newPrivateFeeds = (): PrivateFeeds => ({ seen: new Map() })

const CHANNEL = /^(\d+)\.(orders|balances)$/

/** The subaccount a private channel names, when it exists. */
export function privateChannelOwner(engine: SimEngine, channel: string): SimSubaccount | undefined {
  const m = CHANNEL.exec(channel)
  return m ? engine.subaccounts.get(Number(m[1])) : undefined
}

function balancesOf(sub: SimSubaccount): Map<string, string> {
  const out = new Map<string, string>()
  for (const [name, amount] of sub.balances) out.set(name, fromE18(amount))
  for (const [name, p] of sub.positions) out.set(name, fromE18(p.amountE18))
  return out
}

/** Pushes what changed on every private channel `conn` follows; a channel's first look only records. */
export function pushPrivateChannels(engine: SimEngine, conn: V3WsConn): void {
  for (const channel of conn.channels) {
    const m = CHANNEL.exec(channel)
    const sub = m ? engine.subaccounts.get(Number(m[1])) : undefined
    if (!m || !sub) continue
    const first = !conn.feeds.seen.has(channel)
    const seen = conn.feeds.seen.get(channel) ?? new Map<string, string>()
    conn.feeds.seen.set(channel, seen)
    const data = m[2] === 'orders' ? changedOrders(engine, sub, seen) : changedBalances(sub, seen)
    if (!first && data.length > 0) conn.ws.send(JSON.stringify({ method: 'subscription', params: { channel, data } }))
  }
}

function changedOrders(engine: SimEngine, sub: SimSubaccount, seen: Map<string, string>) {
  const out = []
  for (const o of engine.orders.values()) {
    if (o.subaccountId !== sub.id) continue
    const state = `${o.status}:${o.filledE18}:${o.updatedMs}`
    if (seen.get(o.orderId) === state) continue
    seen.set(o.orderId, state)
    out.push(orderV3(o))
  }
  return out
}

function changedBalances(sub: SimSubaccount, seen: Map<string, string>) {
  const out = []
  const now = balancesOf(sub)
  for (const name of new Set([...now.keys(), ...seen.keys()])) {
    const next = now.get(name) ?? '0'
    const prev = seen.get(name) ?? '0'
    if (next === prev) continue
    seen.set(name, next)
    out.push({ name, previous_balance: prev, new_balance: next, update_type: 'trade' as const })
  }
  return out
}
