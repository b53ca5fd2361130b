/**
 * Session keys and the recipient whitelist as Derive keeps them (docs/exchange.md "What the simulator
 * enforces", each rule with its source): a key is registered for one account with protocol scopes
 * (signed), off-chain scopes, the subaccounts it may act on (none listed: all of them, current and
 * future) and an expiry; it stops working at that expiry. Only the owner, or a key whose grants
 * cover what is asked, may act; a child key stays within the key that registers it; the whitelist
 * bounds where a session key may pay, the owner included, unless the key holds `admin`.
 */
import {
  ACCOUNT_INFO_SCOPE,
  type ProtocolScope,
  RPC,
  scopeOfCode,
  scopeOfWire,
  scopesAllow,
  scopesWithin,
  scopeWire,
  TRADE_SCOPES,
} from '@wh/exchange'
import { type Address, decodeAbiParameters, getAddress, type Hex } from 'viem'
import { SimRpcError } from './rpc-error'
import type { SimState } from './sim-state'
import type { SimSessionKey, SimWallet } from './sim-types'

export type { SimSessionKey } from './sim-types'

/** What a control-API registration without scopes gets: every power, and no expiry (a key the test is not about). */
export const CONTROL_DEFAULT_KEY = { scopes: ['admin'] as ProtocolScope[], expirySec: 4_102_444_800 } // 2100-01-01

/** Who signed: the owner, or one of the account's session keys. */
export type Signer = { kind: 'owner'; address: Address } | { kind: 'key'; address: Address; key: SimSessionKey }

export const scopeErr = (data: string) => new SimRpcError(RPC.UNAUTHORIZED_KEY_SCOPE, 'Unauthorized key scope', data)

/** The signer of an action or a login for `w`, or Derive's refusal: not the owner nor a key (14023), expired (14030). */
export function signerOf(engine: SimState, w: SimWallet, address: string, unknownCode: number = RPC.SIGNER_NOT_OWNER) {
  const a = getAddress(address)
  if (a === getAddress(w.owner)) return { kind: 'owner', address: a } as Signer
  const key = w.sessionKeys.get(a.toLowerCase())
  if (!key)
    throw new SimRpcError(
      unknownCode,
      unknownCode === RPC.SIGNER_NOT_OWNER
        ? 'Signer in on-chain related request is not wallet owner or registered session key'
        : 'Session key not found',
      a,
    )
  if (key.expirySec * 1000 <= engine.now())
    throw new SimRpcError(RPC.SESSION_KEY_EXPIRED, 'Session key expired', `${a} expired at ${key.expirySec}`)
  return { kind: 'key', address: a, key } as Signer
}

/** Whether a key may act on `subaccountId` (no list: every subaccount of the account). */
export function keyCoversSubaccount(key: SimSessionKey, subaccountId: number): boolean {
  return key.subaccountIds.length === 0 || key.subaccountIds.includes(subaccountId)
}

/**
 * Requires `signer` to hold `scope` (or any of `scope` when it is a list) for `subaccountId`:
 * the owner holds everything; a key's grants must cover it (14031).
 */
export function requireScope(
  signer: Signer,
  scope: ProtocolScope | readonly ProtocolScope[],
  subaccountId?: number,
): void {
  if (signer.kind === 'owner') return
  const wanted = typeof scope === 'string' ? [scope] : scope
  if (!wanted.some((s) => scopesAllow(signer.key.scopes, s)))
    throw scopeErr(`${signer.address} lacks ${wanted.length === 1 ? wanted[0] : 'a trade scope'}`)
  if (subaccountId !== undefined && !keyCoversSubaccount(signer.key, subaccountId))
    throw scopeErr(`${signer.address} may not act on subaccount ${subaccountId}`)
}

/** Reads by a session key: `account_info`, or any protocol scope (which bypasses the off-chain ones). */
export function requireRead(signer: Signer, subaccountId?: number): void {
  if (signer.kind === 'owner') return
  const k = signer.key
  if (k.scopes.length === 0 && !k.offchainScopes.includes(ACCOUNT_INFO_SCOPE))
    throw scopeErr(`${signer.address} holds neither a protocol scope nor ${ACCOUNT_INFO_SCOPE}`)
  if (subaccountId !== undefined && !keyCoversSubaccount(k, subaccountId))
    throw scopeErr(`${signer.address} may not read subaccount ${subaccountId}`)
}

export const requireTrade = (signer: Signer, subaccountId: number) => requireScope(signer, TRADE_SCOPES, subaccountId)

/** The owner or an `admin` key: what the whitelist and a key's IP list or off-chain scopes need. */
export function requireOwnerOrAdmin(signer: Signer, what: string): void {
  if (signer.kind === 'key' && !scopesAllow(signer.key.scopes, 'admin'))
    throw scopeErr(`${what} is the owner's, or an admin key's`)
}

/** The protocol scopes of wire strings, or Derive's invalid params naming the unknown one. */
export function scopesOfWire(wire: readonly string[]): ProtocolScope[] {
  return wire.map((w) => {
    const s = scopeOfWire(w)
    if (!s) throw new SimRpcError(RPC.INVALID_PARAMS, 'Invalid params', `protocol_scopes: unknown scope ${w}`)
    return s
  })
}

/**
 * A key `signer` registers must stay within it: its scopes, its subaccounts and its expiry
 * (derive-ts `src/api/sessionKeys.ts`: "a child key must then be a subset of its creator").
 */
export function requireWithinCreator(
  signer: Signer,
  child: Pick<SimSessionKey, 'scopes' | 'subaccountIds' | 'expirySec'>,
) {
  if (signer.kind === 'owner') return
  const k = signer.key
  requireScope(signer, 'create_session_key')
  if (!scopesWithin(child.scopes, k.scopes)) throw scopeErr('a child key may not hold scopes its creator lacks')
  if (
    k.subaccountIds.length > 0 &&
    (child.subaccountIds.length === 0 || child.subaccountIds.some((id) => !k.subaccountIds.includes(id)))
  )
    throw scopeErr('a child key may not reach subaccounts its creator cannot')
  if (child.expirySec > k.expirySec) throw scopeErr('a child key may not outlive its creator')
}

/** Registers (or re-registers) `key` for `w`; a key another account holds is refused (14011). */
export function setSessionKey(engine: SimState, w: SimWallet, key: SimSessionKey): void {
  for (const other of engine.wallets.values())
    if (other !== w && other.sessionKeys.has(key.address.toLowerCase()))
      throw new SimRpcError(
        RPC.SESSION_KEY_REGISTERED_OTHER_ACCOUNT,
        'Session key already registered with another account',
        key.address,
      )
  w.sessionKeys.set(key.address.toLowerCase(), key)
}

/** A key in the spec's `SessionKey` shape (an empty subaccount list expanded to the account's subaccounts). */
export function sessionKeyView(engine: SimState, w: SimWallet, k: SimSessionKey) {
  const all = [...engine.subaccounts.values()].filter((s) => s.wallet === w.wallet).map((s) => s.id)
  return {
    public_session_key: k.address,
    expiry_sec: k.expirySec,
    registered_sec: k.registeredSec,
    label: k.label,
    ip_whitelist: [...k.ipWhitelist],
    offchain_scopes: [...k.offchainScopes],
    protocol_scopes: k.scopes.map(scopeWire),
    subaccount_ids: k.subaccountIds.length > 0 ? [...k.subaccountIds] : all,
  }
}

/** The owner's whitelist: recipients its session keys may pay (private/update_whitelisted_recipients). */
export function whitelistRecipient(engine: SimState, owner: Address, recipient: Address): void {
  const w = walletOfOwner(engine, owner) ?? engine.registerWallet(owner)
  w.whitelist.add(getAddress(recipient).toLowerCase())
}

/**
 * Whether `signer` may pay `recipient` out of `w`: the owner always; an admin key always; any other
 * key only a whitelisted recipient, the owner included (derive-ts `src/api/withdrawals.ts`; spec
 * `PrivateGetAccountResponse.whitelisted_recipients`).
 */
export function mayPay(w: SimWallet, signer: Signer, recipient: Address): boolean {
  if (signer.kind === 'owner' || scopesAllow(signer.key.scopes, 'admin')) return true
  return w.whitelist.has(recipient.toLowerCase())
}

/**
 * Derive's L1 action 51 from `sender`: the owner of an account sets a key without a signature (a
 * multisig's path, derive-ts `src/api/onchainActions.ts`): `(key, expiry, scopes, subaccounts)`; an
 * expiry now or past (0) deletes the key; no floor on the expiry. Ignored, as Derive ignores it, when
 * the sender owns no account, the key is another account's, or a scope code is unknown.
 */
export function applyL1SessionKey(engine: SimState, sender: Address, data: Hex): boolean {
  const w = walletOfOwner(engine, sender)
  if (!w) return false
  let decoded: readonly [Address, bigint, readonly bigint[], readonly bigint[]]
  try {
    decoded = decodeAbiParameters(
      [{ type: 'address' }, { type: 'uint256' }, { type: 'uint256[]' }, { type: 'uint256[]' }],
      data,
    )
  } catch {
    return false // anyone may submit action 51: data that does not decode is ignored, never a watcher stuck on it
  }
  const [key, expiry, codes, subs] = decoded
  const scopes = codes.map((c) => scopeOfCode(Number(c)))
  if (scopes.some((s) => s === undefined)) return false
  const address = getAddress(key)
  const nowSec = Math.floor(engine.now() / 1000)
  if (Number(expiry) <= nowSec) return w.sessionKeys.delete(address.toLowerCase())
  try {
    setSessionKey(engine, w, {
      address,
      expirySec: Number(expiry),
      scopes: scopes as ProtocolScope[],
      subaccountIds: subs.map(Number),
      offchainScopes: [ACCOUNT_INFO_SCOPE],
      label: '',
      ipWhitelist: [],
      registeredSec: nowSec,
    })
  } catch {
    return false // another account's key
  }
  return true
}

function walletOfOwner(engine: SimState, owner: Address): SimWallet | undefined {
  for (const w of engine.wallets.values()) if (w.owner.toLowerCase() === owner.toLowerCase()) return w
  return undefined
}
