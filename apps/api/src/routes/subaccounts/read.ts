/**
 * The caller's subaccounts as the API shows them (GET /subaccounts and the portfolio summary):
 * state, stop, balances per currency from the journal (userSub(u, exchangeId, currency)),
 * fundings in flight and open releases. Base units here; the routes format them.
 */
import type { Sql } from '@wh/db'
import { parseAccount, userBalances } from '@wh/ledger'

export type SubaccountState = 'pending' | 'active' | 'stopped'

import { OPEN_RELEASE_STATES } from '@wh/subaccounts'

export interface SubaccountView {
  asset: string
  exchangeId: string | null
  /** pending: no exchange subaccount yet (its first funding has not settled); stopped: a stop is raised */
  state: SubaccountState
  stopReason: string | null
  balances: { currency: string; units: bigint }[]
  pendingFundings: { currency: string; units: bigint }[]
  openReleases: { id: string; state: string; reason: string | null; createdAt: Date }[]
}

interface Row {
  id: string
  asset: string
  exchange_id: string | null
  stopped_at: Date | null
  stop_reason: string | null
}

/** Every subaccount of `userId`, by asset; three queries whatever the count. */
export async function listSubaccounts(sql: Sql, userId: string): Promise<SubaccountView[]> {
  const [subs, balances, fundings, releases] = await Promise.all([
    sql<Row[]>`select id, asset, exchange_id::text as exchange_id, stopped_at, stop_reason from subaccounts
      where user_id = ${userId} order by asset`,
    userBalances(sql, userId),
    sql<{ subaccount_id: string; currency: string; units: string }[]>`
      select subaccount_id, currency, sum(amount)::text as units from subaccount_transfers
      where user_id = ${userId} and kind = 'fund' and state in ('reserved', 'submitted', 'accepted')
      group by subaccount_id, currency order by currency`,
    sql<{ id: string; subaccount_id: string; state: string; reason: string | null; created_at: Date }[]>`
      select id, subaccount_id, state, reason, created_at from subaccount_releases
      where user_id = ${userId} and state in ${sql([...OPEN_RELEASE_STATES])} order by created_at`,
  ])
  const held = new Map<string, { currency: string; units: bigint }[]>()
  for (const b of balances) {
    const p = parseAccount(b.account)
    if (p?.bearer !== 'user' || p.family !== 'sub' || b.balance === 0n) continue
    held.set(p.subaccountId, [...(held.get(p.subaccountId) ?? []), { currency: b.currency, units: b.balance }])
  }
  return subs.map((s) => ({
    asset: s.asset,
    exchangeId: s.exchange_id,
    state: s.stopped_at ? 'stopped' : s.exchange_id === null ? 'pending' : 'active',
    stopReason: s.stopped_at ? s.stop_reason : null,
    balances: s.exchange_id === null ? [] : (held.get(s.exchange_id) ?? []),
    pendingFundings: fundings
      .filter((f) => f.subaccount_id === s.id)
      .map((f) => ({ currency: f.currency, units: BigInt(f.units) })),
    openReleases: releases
      .filter((r) => r.subaccount_id === s.id)
      .map((r) => ({ id: r.id, state: r.state, reason: r.reason, createdAt: r.created_at })),
  }))
}
