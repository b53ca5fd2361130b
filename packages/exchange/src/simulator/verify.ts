/**
 * The checks the real exchange makes on credentials. Request auth: the timestamp is fresh and
 * its EIP-191 signature recovers to the wallet's owner or one of its session keys. Actions: the
 * EIP-712 digest is recomputed from the submitted fields and must recover to the claimed signer,
 * who must be the owner or a session key; the expiry must lie ahead and the nonce be unused.
 */
import type { Address, Hex } from 'viem'
import { type ActionFields, recoverActionSigner } from '../protocol/action'
import { recoverAuthSigner } from '../protocol/auth-message'
import { RPC } from '../protocol/rpc-codes'
import type { SimEngine } from './engine'
import { rpcErr, SimRpcError } from './rpc-error'
import type { SimSubaccount, SimWallet } from './sim-types'

const FUTURE_SKEW_MS = 60_000
/** Derive asks for an expiry more than five minutes out. */
export const MIN_SIGNATURE_TTL_SEC = 300

/** Header names arrive lower-cased from node:http; both Derive and legacy Lyra spellings work. */
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

/** Returns the authenticated wallet, or throws Derive's auth error. */
export async function verifyAuth(
  engine: SimEngine,
  proof: { wallet: string; timestamp: string | number; signature: string } | null,
): Promise<SimWallet> {
  if (!proof) throw rpcErr.auth('missing authentication headers')
  const w = engine.wallet(proof.wallet)
  if (!w) throw rpcErr.account(proof.wallet)
  const ts = Number(proof.timestamp)
  const now = engine.now()
  if (!Number.isFinite(ts) || ts < now - engine.authMaxAgeMs || ts > now + FUTURE_SKEW_MS)
    throw rpcErr.auth('stale or future timestamp')
  let signer: Address
  try {
    signer = await recoverAuthSigner(String(proof.timestamp), proof.signature as Hex)
  } catch {
    throw rpcErr.auth('malformed signature')
  }
  if (!isPermittedSigner(w, signer)) throw rpcErr.auth('signer is not the owner or a session key of the wallet')
  return w
}

/** Verifies a signed action; on success the nonce is consumed. */
export async function verifyAction(
  engine: SimEngine,
  w: SimWallet,
  nonceScope: SimSubaccount | SimWallet,
  fields: Omit<ActionFields, 'owner'>,
  signature: string,
): Promise<void> {
  if (Number(fields.expirySec) < Math.floor(engine.now() / 1000) + MIN_SIGNATURE_TTL_SEC)
    throw new SimRpcError(RPC.INVALID_SIGNATURE_EXPIRY, 'Invalid signature expiry', 'expiry must be >5min from now')
  let recovered: Address
  try {
    recovered = await recoverActionSigner(
      { ...fields, owner: w.wallet },
      engine.chainId,
      engine.contracts.matching,
      signature as Hex,
    )
  } catch {
    throw rpcErr.signature('malformed signature')
  }
  if (recovered.toLowerCase() !== fields.signer.toLowerCase()) throw rpcErr.signature('signature does not match data')
  if (!isPermittedSigner(w, fields.signer)) throw rpcErr.auth('signer is not the owner or a session key of the wallet')
  const used = 'usedNonces' in nonceScope ? nonceScope.usedNonces : walletNonces(w)
  const key = fields.nonce.toString()
  if (used.has(key)) throw new SimRpcError(RPC.NONCE_NOT_UNIQUE, 'Non unique nonce', key)
  used.add(key)
}

const perWallet = new WeakMap<SimWallet, Set<string>>()
function walletNonces(w: SimWallet): Set<string> {
  const s = perWallet.get(w) ?? new Set<string>()
  perWallet.set(w, s)
  return s
}
