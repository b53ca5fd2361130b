/**
 * Session-key scopes as Derive checks them (docs/exchange-v3.md "Session keys"). Protocol scopes form
 * a tree: a grant covers its whole branch (`admin` everything, `trade:all` both venues,
 * `trade:orderbook:all` every orderbook market, `transfer:all` every kind of transfer), and a key's
 * grants allow an action when one of them covers the scope the action requires (derive-ts 3.0.13
 * `src/auth/scopes.ts`; docs.derive.xyz `/authentication/access-scopes`). The codes go into the
 * signed set-session-key data, the wire strings into `protocol_scopes`.
 */
import { PROTOCOL_SCOPES, type ProtocolScope } from './constants'

/** Each scope's parent in the tree (`admin` is the root). */
const PARENT: Partial<Record<ProtocolScope, ProtocolScope>> = {
  withdraw: 'admin',
  'trade:all': 'admin',
  'trade:orderbook:all': 'trade:all',
  'trade:orderbook:spot': 'trade:orderbook:all',
  'trade:orderbook:perp': 'trade:orderbook:all',
  'trade:orderbook:option': 'trade:orderbook:all',
  'trade:rfq:all': 'trade:all',
  'trade:rfq:spot': 'trade:rfq:all',
  'trade:rfq:perp': 'trade:rfq:all',
  'trade:rfq:option': 'trade:rfq:all',
  'transfer:all': 'admin',
  'transfer:existing_subaccount': 'transfer:all',
  'transfer:new_subaccount': 'transfer:all',
  'transfer:different_owner_subaccount': 'transfer:all',
  create_session_key: 'admin',
  liquidate: 'admin',
  'vault:all': 'admin',
  'vault:curator_create': 'vault:all',
  'vault:curator_mint_and_burn': 'vault:all',
  'vault:user_deposit': 'vault:all',
  'vault:user_withdraw': 'vault:all',
  'vault:user_cancel': 'vault:all',
}

/**
 * Scope 15 is spelt `set_session_key` by derive-ts (what Derive's own TypeScript SDK sends) and
 * `create_session_key` by derive-py and derive-rs: the client sends derive-ts's, the simulator
 * takes both.
 */
const WIRE_ALIASES: Record<string, ProtocolScope> = { set_session_key: 'create_session_key' }

/** The off-chain scope a key needs to read account data when it holds no protocol scope. */
export const ACCOUNT_INFO_SCOPE = 'account_info'

/** The wire string of a scope (derive-ts's spelling). */
export function scopeWire(scope: ProtocolScope): string {
  return scope === 'create_session_key' ? 'set_session_key' : scope
}

/** The scope a wire string names, or undefined for one Derive does not define. */
export function scopeOfWire(wire: string): ProtocolScope | undefined {
  if (wire in WIRE_ALIASES) return WIRE_ALIASES[wire]
  return wire in PROTOCOL_SCOPES ? (wire as ProtocolScope) : undefined
}

/** The scope a signed code names, or undefined. */
export function scopeOfCode(code: number): ProtocolScope | undefined {
  return (Object.keys(PROTOCOL_SCOPES) as ProtocolScope[]).find((s) => PROTOCOL_SCOPES[s] === code)
}

/** Whether `grant` covers `required`: it is the scope itself or one of its ancestors. */
export function scopeCovers(grant: ProtocolScope, required: ProtocolScope): boolean {
  for (let s: ProtocolScope | undefined = required; s !== undefined; s = PARENT[s]) if (s === grant) return true
  return false
}

/** Whether one of `grants` covers `required`. */
export function scopesAllow(grants: readonly ProtocolScope[], required: ProtocolScope): boolean {
  return grants.some((g) => scopeCovers(g, required))
}

/** Whether every scope of `child` is covered by `parent`'s grants (a key may only create keys within its own authority). */
export function scopesWithin(child: readonly ProtocolScope[], parent: readonly ProtocolScope[]): boolean {
  return child.every((c) => scopesAllow(parent, c))
}

/** The orderbook scope an order on an instrument of this type needs. */
export function orderScopeOf(instrumentType: 'option' | 'perp' | 'erc20'): ProtocolScope {
  return instrumentType === 'option'
    ? 'trade:orderbook:option'
    : instrumentType === 'perp'
      ? 'trade:orderbook:perp'
      : 'trade:orderbook:spot'
}

/** The trade scopes: a cancel needs any one of them (spec `private/cancel`: "any trade scope"). */
export const TRADE_SCOPES: readonly ProtocolScope[] = (Object.keys(PROTOCOL_SCOPES) as ProtocolScope[]).filter((s) =>
  s.startsWith('trade:'),
)
