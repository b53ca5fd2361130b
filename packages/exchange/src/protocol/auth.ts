/**
 * v3 session login (docs/exchange-v3.md, "Authentication"): the signer EIP-191 personal_signs the
 * current UTC time in milliseconds as a decimal string. REST sends wallet/timestamp/signature as
 * X-Derive* headers on every private request; WebSocket sends the same three as `public/login`
 * params (timestamp as a JSON number). The wallet is the owner's L1 EOA or multisig; the signer is
 * the owner or one of its registered session keys. Login authorises no action by itself.
 * The algorithm and headers are v2's (`../auth-message`); v3 only names the L1 owner as the wallet.
 */
import { type Address, getAddress, type Hex } from 'viem'
import { AUTH_HEADERS, type AuthProof, recoverAuthSigner, signAuthProof } from './auth-message'

export const V3_AUTH_HEADERS = AUTH_HEADERS
export type V3LoginProof = AuthProof

/** Signs `nowMs` for `owner` (checksummed) with the owner key or a session key. */
export function signV3Login(owner: Address, signerKey: Hex, nowMs: number): Promise<V3LoginProof> {
  return signAuthProof(getAddress(owner), signerKey, nowMs)
}

/** The three REST headers for a private request. */
export function v3AuthHeaders(proof: V3LoginProof): Record<string, string> {
  return {
    [V3_AUTH_HEADERS.wallet]: proof.wallet,
    [V3_AUTH_HEADERS.timestamp]: proof.timestamp,
    [V3_AUTH_HEADERS.signature]: proof.signature,
  }
}

/** `public/login` params over WebSocket: the timestamp travels as a number (exact: ms fit in 2^53). */
export function v3WsLoginParams(proof: V3LoginProof): { wallet: Address; timestamp: number; signature: Hex } {
  return { wallet: proof.wallet, timestamp: Number(proof.timestamp), signature: proof.signature }
}

/** Who signed a login timestamp; throws on a malformed signature. */
export const recoverV3LoginSigner = recoverAuthSigner
