/**
 * What the v3 exchange checks before it acts (docs/exchange-v3.md "Authentication" and "Nonces,
 * expiries and number formats"). The wallet is the owner's own address (no Derive Wallet): the
 * simulator finds the account whose owner it is. Actions are verified under the v3 domain
 * (constant verifying contract, the simulator's chain id) with the owner in the Action struct,
 * the signature expiry inside [now + 5 min, now + 120 days] (11011) and the nonce a present-day
 * nanosecond time inside its kind's window (11018), unused (11017) and, for transfers and
 * withdrawals, above the subaccount's last one.
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
import type { SimSubaccount, SimWallet } from '../sim-types'

export const V3_INVALID_NONCE_DATE = 11018
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

export function isPermittedSigner(w: SimWallet, signer: string): boolean {
  const s = signer.toLowerCase()
  return s === w.owner.toLowerCase() || w.sessionKeys.has(s)
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
 * owner key or one of the account's session keys. The authenticated account, or Derive's auth error.
 */
export async function verifyV3Auth(
  engine: SimEngine,
  proof: { wallet: string; timestamp: string | number; signature: string } | null,
): Promise<SimWallet> {
  if (!proof) throw rpcErr.auth('missing authentication headers')
  const w = accountOfOwner(engine, proof.wallet)
  if (!w) throw rpcErr.account(proof.wallet)
  const ts = Number(proof.timestamp)
  const now = engine.now()
  if (!Number.isFinite(ts) || ts < now - engine.authMaxAgeMs || ts > now + FUTURE_SKEW_MS)
    throw rpcErr.auth('stale or future timestamp')
  let signer: Address
  try {
    signer = await recoverV3LoginSigner(String(proof.timestamp), proof.signature as Hex)
  } catch {
    throw rpcErr.auth('malformed signature')
  }
  if (!isPermittedSigner(w, signer)) throw rpcErr.auth('signer is not the owner or a session key of the wallet')
  return w
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

const lastNonce = new WeakMap<SimSubaccount, bigint>()

/** Verifies a signed v3 action for `sub`; on success its nonce is spent. */
export async function verifyV3Action(engine: SimEngine, w: SimWallet, sub: SimSubaccount, a: V3ActionInput) {
  const now = engine.now()
  if (!checkSignatureExpiry(a.kind, a.expirySec, now))
    throw new SimRpcError(RPC.INVALID_SIGNATURE_EXPIRY, 'Invalid signature expiry', 'outside [now+300s, now+120d]')
  const verdict = checkNonce(a.kind, a.nonce, now, lastNonce.get(sub))
  if (!verdict.ok && verdict.reason === 'not_increasing')
    throw new SimRpcError(RPC.NONCE_NOT_UNIQUE, 'Non unique nonce', 'nonce must exceed the last one')
  if (!verdict.ok) throw new SimRpcError(V3_INVALID_NONCE_DATE, 'Invalid nonce date', verdict.reason)
  const signature = (a.signature.startsWith('0x') ? a.signature : `0x${a.signature}`) as Hex
  const fields = { ...a, owner: w.owner, signer: a.signer as Address }
  let recovered: Address
  try {
    recovered = await recoverV3ActionSigner(fields, { chainId: engine.chainId }, signature)
  } catch {
    throw rpcErr.signature('malformed signature')
  }
  if (!isAddressEqual(recovered, fields.signer)) throw rpcErr.signature('signature does not match data')
  if (!isPermittedSigner(w, a.signer)) throw rpcErr.auth('signer is not the owner or a session key of the wallet')
  const key = `v3:${a.nonce}`
  if (sub.usedNonces.has(key)) throw new SimRpcError(RPC.NONCE_NOT_UNIQUE, 'Non unique nonce', a.nonce.toString())
  sub.usedNonces.add(key)
  if (a.kind !== 'order' && a.kind !== 'rfq') lastNonce.set(sub, a.nonce)
}
