/**
 * What the v3 exchange checks before it acts (docs/exchange-v3.md "Authentication" and "Nonces,
 * expiries and number formats"). The wallet is the owner's own address (no Derive Wallet): the
 * simulator finds the account whose owner it is. Actions are verified under the v3 domain
 * (constant verifying contract, the simulator's chain id) with the owner in the Action struct,
 * the signature expiry inside [now + 5 min, now + 120 days] (11011) and the nonce a present-day
 * nanosecond time inside its kind's window (11018), unused (11017) and, for the increasing kinds
 * (transfers, withdrawals, session keys, the whitelist), above the last one; the signer the owner or
 * a session key whose scopes cover the action (../session-keys.ts).
 */

import {
  checkNonce,
  checkSignatureExpiry,
  RPC,
  recoverV3ActionSigner,
  recoverV3LoginSigner,
  type V3ActionKind,
} from '@wh/exchange'
import { type Address, type Hex, isAddressEqual } from 'viem'
import type { SimEngine } from '../engine'
import { rpcErr, SimRpcError } from '../rpc-error'
import { type Signer, signerOf } from '../session-keys'
import type { SimSubaccount, SimWallet } from '../sim-types'

/** How far ahead of the simulator's clock a login timestamp may be. */
const FUTURE_SKEW_MS = 60_000

/** The login headers; names arrive lower-cased from node:http, and both Derive and legacy Lyra spellings work. */
export function readAuthHeaders(headers: Record<string, string | string[] | undefined>) {
  const get = (a: string, b: string) => {
    const v = headers[a] ?? headers[b]
    return Array.isArray(v) ? v[0] : v
  }
  const wallet = get('x-derivewallet', 'x-lyrawallet')
  const timestamp = get('x-derivetimestamp', 'x-lyratimestamp')
  const signature = get('x-derivesignature', 'x-lyrasignature')
  if (!wallet || !timestamp || !signature) return null
  return { wallet, timestamp: String(timestamp), signature }
}

/** The account whose owner (L1 EOA or multisig) is `address`. */
export function accountOfOwner(engine: SimEngine, address: string): SimWallet | undefined {
  if (!/^0x[0-9a-fA-F]{40}$/.test(address)) return undefined
  for (const w of engine.wallets.values()) if (isAddressEqual(w.owner, address as Address)) return w
  return undefined
}

/**
 * Login (headers or `public/login`): the wallet named is the owner; the timestamp is fresh (within
 * the engine's `authMaxAgeMs`, at most a minute ahead) and its EIP-191 signature recovers to the
 * owner or one of the account's unexpired session keys (unknown 14026, expired 14030). The
 * authenticated account and who signed, or Derive's refusal.
 */
export async function verifyV3Auth(
  engine: SimEngine,
  proof: { wallet: string; timestamp: string | number; signature: string } | null,
): Promise<{ wallet: SimWallet; signer: Signer }> {
  if (!proof) throw new SimRpcError(RPC.HEADER_WALLET_MISSING, 'The X-DeriveWallet header not provided', null)
  const w = accountOfOwner(engine, proof.wallet)
  if (!w) throw rpcErr.account(proof.wallet)
  const ts = Number(proof.timestamp)
  const now = engine.now()
  if (!Number.isFinite(ts) || ts < now - engine.authMaxAgeMs || ts > now + FUTURE_SKEW_MS)
    throw rpcErr.signature(
      `login timestamp ${proof.timestamp} is outside [now - ${engine.authMaxAgeMs} ms, now + 1 min]`,
    )
  let recovered: Address
  try {
    recovered = await recoverV3LoginSigner(String(proof.timestamp), proof.signature as Hex)
  } catch {
    throw rpcErr.signature('malformed signature')
  }
  return { wallet: w, signer: signerOf(engine, w, recovered, RPC.SESSION_KEY_NOT_FOUND) }
}

export interface V3ActionInput {
  kind: V3ActionKind
  subaccountId: bigint
  nonce: bigint
  module: Address
  data: Hex
  expirySec: bigint
  signer: string
  signature: string
}

/** The last nonce of each subaccount, or of the account itself for its wallet-level actions (signed on subaccount 0). */
const lastNonce = new WeakMap<SimSubaccount | SimWallet, bigint>()
const walletNonces = new WeakMap<SimWallet, Set<string>>()

/**
 * Verifies a signed v3 action of `w` on `on` (a subaccount, or the account itself for wallet-level
 * actions): the signature expiry (11011), the nonce (11018 outside its kind's window, 11017 reused or
 * not above the last of an increasing kind), the signature (14014), the signer (the owner or an
 * unexpired session key: 14023, 14030), then `authorize`, which checks what the signer may do
 * (scopes, 14031). An order or RFQ may not outlive its key (derive-ts `codecs/sessionKey.ts`).
 * On success the nonce is spent and the signer returned.
 */
export async function verifyV3Action(
  engine: SimEngine,
  w: SimWallet,
  on: SimSubaccount | SimWallet,
  a: V3ActionInput,
  authorize: (signer: Signer) => void,
): Promise<Signer> {
  const now = engine.now()
  if (!checkSignatureExpiry(a.kind, a.expirySec, now))
    throw new SimRpcError(RPC.INVALID_SIGNATURE_EXPIRY, 'Invalid signature expiry', 'outside [now+300s, now+120d]')
  const verdict = checkNonce(a.kind, a.nonce, now, lastNonce.get(on))
  if (!verdict.ok && verdict.reason === 'not_increasing')
    throw new SimRpcError(RPC.NONCE_NOT_UNIQUE, 'Non unique nonce', 'nonce must exceed the last one')
  if (!verdict.ok) throw new SimRpcError(RPC.INVALID_NONCE_DATE, 'Invalid nonce date', verdict.reason)
  const signature = (a.signature.startsWith('0x') ? a.signature : `0x${a.signature}`) as Hex
  const fields = { ...a, owner: w.owner, signer: a.signer as Address }
  let recovered: Address
  try {
    recovered = await recoverV3ActionSigner(fields, { chainId: engine.chainId }, signature)
  } catch {
    throw rpcErr.signature('malformed signature')
  }
  if (!isAddressEqual(recovered, fields.signer)) throw rpcErr.signature('signature does not match data')
  const signer = signerOf(engine, w, a.signer)
  authorize(signer)
  if ((a.kind === 'order' || a.kind === 'rfq') && signer.kind === 'key' && a.expirySec > BigInt(signer.key.expirySec))
    throw new SimRpcError(
      RPC.INVALID_SIGNATURE_EXPIRY,
      'Invalid signature expiry',
      'the signature outlives its session key',
    )
  const used = 'usedNonces' in on ? on.usedNonces : (walletNonces.get(on) ?? new Set<string>())
  if (!('usedNonces' in on)) walletNonces.set(on, used)
  const key = `v3:${a.nonce}`
  if (used.has(key)) throw new SimRpcError(RPC.NONCE_NOT_UNIQUE, 'Non unique nonce', a.nonce.toString())
  used.add(key)
  if (a.kind !== 'order' && a.kind !== 'rfq') lastNonce.set(on, a.nonce)
  return signer
}
