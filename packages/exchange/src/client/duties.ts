/**
 * What each of the service's session keys may do at Derive, and no more (docs/operations.md "Exchange
 * session keys"): the trading key sells and buys back options and moves collateral between the
 * platform's own subaccounts, creating users' subaccounts on their first funding, on every subaccount
 * (new ones appear with each user); the payout key withdraws to L1, from the funding subaccount only,
 * and pays only the whitelisted hot wallets (Derive binds a key's payouts to the whitelist unless it
 * holds admin). The worker reads its keys back (`private/session_keys`) and refuses to start when one
 * holds more than its duty, or cannot do it.
 */
import type { ProtocolScope } from '../protocol/constants'
import { scopeOfWire, scopesAllow } from '../protocol/scopes'
import type * as W from '../v3/wire.gen'

export type KeyDuty = 'trading' | 'payout'

export const SESSION_KEY_DUTIES: Readonly<Record<KeyDuty, readonly ProtocolScope[]>> = {
  trading: ['trade:orderbook:option', 'transfer:existing_subaccount', 'transfer:new_subaccount'],
  payout: ['withdraw'],
}

/**
 * Why a registered key does not fit its duty (nothing: it fits): a scope beyond the duty (a branch that
 * covers more, `admin`, `trade:all`, `transfer:all`, counts as beyond), a scope of the duty missing, a
 * payout key reaching a subaccount other than the funding one, or an expiry already past.
 */
export function dutyProblems(
  k: Pick<W.SessionKey, 'protocol_scopes' | 'subaccount_ids' | 'expiry_sec'>,
  duty: KeyDuty,
  o: { nowSec: number; fundingSubaccountId?: number | undefined },
): string[] {
  const want = SESSION_KEY_DUTIES[duty]
  const out: string[] = []
  const held = k.protocol_scopes.map((w) => ({ wire: w, scope: scopeOfWire(w) }))
  for (const h of held)
    if (!h.scope || !want.includes(h.scope)) out.push(`holds ${h.wire}, beyond its ${duty} duty (${want.join(', ')})`)
  const scopes = held.flatMap((h) => (h.scope ? [h.scope] : []))
  for (const s of want) if (!scopesAllow(scopes, s)) out.push(`lacks ${s}, which its ${duty} duty needs`)
  if (duty === 'payout') {
    const only = o.fundingSubaccountId
    if (k.subaccount_ids.length !== 1 || k.subaccount_ids[0] !== only)
      out.push(
        `reaches subaccounts ${k.subaccount_ids.join(', ') || 'all'}; a payout key reaches the funding subaccount ${only} only`,
      )
  }
  if (k.expiry_sec <= o.nowSec) out.push(`expired at ${new Date(k.expiry_sec * 1000).toISOString()}`)
  return out
}
