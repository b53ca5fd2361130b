/**
 * The account's session keys and recipient whitelist on the v3 wire, as Derive serves them
 * (spec `private/set_session_key`, `edit_session_key`, `session_keys`, `update_whitelisted_recipients`,
 * `get_account`; the rules in ../session-keys.ts): registering a key is an action signed on
 * subaccount 0 by the owner or by a key holding `set_session_key` whose grants cover the new key's;
 * the whitelist is the owner's (or an admin key's) own signed action; editing a key's IP list or
 * off-chain scopes is the owner's or an admin key's, its label anyone's who may read the account.
 */
import {
  encodeSessionKeyData,
  encodeWhitelistedRecipients,
  PROTOCOL_SCOPES,
  RPC,
  SESSION_KEY_MIN_LIFETIME_SEC,
  V3_MODULES,
  type V3Wire as W,
} from '@wh/exchange'
import { type Address, getAddress } from 'viem'
import { txRecord } from '../accounts'
import { type Ctx, check, type Handler, ownSubaccount, requireSigner, requireWallet } from '../handler'
import { SimRpcError } from '../rpc-error'
import {
  requireOwnerOrAdmin,
  requireRead,
  requireWithinCreator,
  type SimSessionKey,
  scopesOfWire,
  sessionKeyView,
  setSessionKey,
} from '../session-keys'
import type { SimWallet } from '../sim-types'
import { encoded } from './methods-funds'
import { V3EditSessionKeyParams, V3SetSessionKeyParams, V3WalletParams, V3WhitelistParams } from './params'
import { verifyV3Action } from './verify'

/** The wallet a request names must be the authenticated one (14020). */
function ownWallet(ctx: Ctx, wallet: string): SimWallet {
  const w = requireWallet(ctx)
  if (getAddress(wallet) !== getAddress(w.owner))
    throw new SimRpcError(
      RPC.HEADER_WALLET_MISMATCH,
      'The X-DeriveWallet header does not match the requested subaccount_id or wallet',
      wallet,
    )
  return w
}

function keyOf(w: SimWallet, address: string): SimSessionKey {
  const k = w.sessionKeys.get(address.toLowerCase())
  if (!k) throw new SimRpcError(RPC.SESSION_KEY_NOT_FOUND, 'Session key not found', address)
  return k
}

const setKey: Handler = async (ctx, raw): Promise<W.PrivateSetSessionKeyResponse> => {
  const p = check<V3SetSessionKeyParams>(V3SetSessionKeyParams, raw)
  const w = ownWallet(ctx, p.wallet)
  const nowSec = Math.floor(ctx.engine.now() / 1000)
  // over the API a key must live at least 5 minutes (derive-ts codecs/sessionKey.ts, error 14039)
  if (BigInt(p.expiry_sec) < BigInt(nowSec) + SESSION_KEY_MIN_LIFETIME_SEC)
    throw new SimRpcError(RPC.SESSION_KEY_EXPIRY_TOO_SHORT, 'Session key expiry too short', 'expiry_sec >= now + 300')
  const scopes = scopesOfWire(p.protocol_scopes)
  const subaccountIds = p.subaccount_ids ?? []
  for (const id of subaccountIds) ownSubaccount(ctx, id)
  const address = getAddress(p.public_session_key)
  const data = encoded(() =>
    encodeSessionKeyData({
      sessionKey: address,
      expirySec: BigInt(p.expiry_sec),
      scopes: scopes.map((s) => PROTOCOL_SCOPES[s]),
      subaccountIds: subaccountIds.map(BigInt),
    }),
  )
  const child = { scopes, subaccountIds, expirySec: p.expiry_sec }
  const action = {
    kind: 'session_key' as const,
    subaccountId: 0n,
    nonce: BigInt(p.nonce),
    module: V3_MODULES.setSessionKey,
    data,
    expirySec: BigInt(p.signature_expiry_sec),
    signer: p.signer,
    signature: p.signature,
  }
  await verifyV3Action(ctx.engine, w, w, action, (s) => requireWithinCreator(s, child))
  const key: SimSessionKey = {
    address,
    ...child,
    offchainScopes: [...p.offchain_scopes],
    label: p.label ?? '',
    ipWhitelist: [...(p.ip_whitelist ?? [])],
    registeredSec: nowSec,
  }
  setSessionKey(ctx.engine, w, key)
  const { registered_sec: _r, label, ...view } = sessionKeyView(ctx.engine, w, key)
  return { ...view, label }
}

const editKey: Handler = (ctx, raw): W.SessionKey => {
  const p = check<V3EditSessionKeyParams>(V3EditSessionKeyParams, raw)
  const w = ownWallet(ctx, p.wallet)
  const signer = requireSigner(ctx)
  const k = keyOf(w, p.public_session_key)
  requireRead(signer)
  if (p.ip_whitelist != null || p.offchain_scopes != null)
    requireOwnerOrAdmin(signer, "a key's IP list and off-chain scopes")
  if (p.label != null) k.label = p.label
  if (p.ip_whitelist != null) k.ipWhitelist = [...p.ip_whitelist]
  if (p.offchain_scopes != null) k.offchainScopes = [...p.offchain_scopes]
  return sessionKeyView(ctx.engine, w, k)
}

const updateWhitelist: Handler = async (ctx, raw): Promise<W.UpdateWhitelistedRecipientsResponse> => {
  const p = check<V3WhitelistParams>(V3WhitelistParams, raw)
  const w = ownWallet(ctx, p.wallet)
  const add = p.add.map((a) => getAddress(a))
  const remove = p.remove.map((a) => getAddress(a))
  const action = {
    kind: 'whitelist' as const,
    subaccountId: 0n,
    nonce: BigInt(p.nonce),
    module: V3_MODULES.whitelistedRecipient,
    data: encoded(() => encodeWhitelistedRecipients(add, remove)),
    expirySec: BigInt(p.signature_expiry_sec),
    signer: p.signer,
    signature: p.signature,
  }
  // an owner-or-admin operation (spec private/update_whitelisted_recipients: "session keys need the admin scope")
  await verifyV3Action(ctx.engine, w, w, action, (s) => requireOwnerOrAdmin(s, 'the recipient whitelist'))
  for (const a of add) w.whitelist.add(a.toLowerCase())
  for (const r of remove) w.whitelist.delete(r.toLowerCase())
  const tx = txRecord(ctx.engine, 'account', { whitelist: { add, remove } })
  return { operation_id: ctx.engine.transactions.size, op_uuid: tx.id, whitelisted_recipients: whitelistOf(w) }
}

function whitelistOf(w: SimWallet): string[] {
  return [...w.whitelist].map((a) => getAddress(a as Address))
}

/** private/get_account; the rate limits it reports are the simulator's own (rate-limit.ts), 0 when off. */
const account: Handler = (ctx, raw): W.PrivateGetAccountResponse => {
  const w = ownWallet(ctx, check<{ wallet: string }>(V3WalletParams, raw).wallet)
  const l = ctx.engine.rateLimiter?.limits
  const tps = (n: number | undefined) => (l && n !== undefined ? Math.floor((n * 1000) / l.windowMs) : 0)
  const subs = [...ctx.engine.subaccounts.values()].filter((s) => s.wallet === w.wallet).map((s) => s.id)
  return {
    wallet: w.owner,
    subaccount_ids: subs,
    fallback_subaccount_id: w.fallbackSubaccountId ?? 0,
    whitelisted_recipients: whitelistOf(w),
    cancel_on_disconnect: false,
    is_rfq_maker: false,
    creation_timestamp_sec: null,
    referral_code: null,
    per_endpoint_tps: {},
    websocket_matching_tps: tps(l?.matching),
    websocket_non_matching_tps: tps(l?.nonMatching),
    websocket_option_tps: tps(l?.matching),
    websocket_perp_tps: tps(l?.matching),
    fee_info: { base_fee_discount: '0', rfq_maker_discount: '0', rfq_taker_discount: '0' },
  }
}

export const keysV3: Record<string, Handler> = {
  'private/set_session_key': setKey,
  'private/edit_session_key': editKey,
  'private/session_keys': (ctx, raw): W.PrivateSessionKeysResponse => {
    const w = ownWallet(ctx, check<{ wallet: string }>(V3WalletParams, raw).wallet)
    return { public_session_keys: [...w.sessionKeys.values()].map((k) => sessionKeyView(ctx.engine, w, k)) }
  },
  'private/update_whitelisted_recipients': updateWhitelist,
  'private/get_account': account,
}
