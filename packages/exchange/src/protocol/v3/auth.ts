/**
 * v3 session login (docs/exchange-v3.md, "Authentication"): the signer EIP-191 personal_signs the
 * current UTC time in milliseconds as a decimal string. REST sends wallet/timestamp/signature as
 * X-Derive* headers on every private request; WebSocket sends the same three as `public/login`
 * params (timestamp as a JSON number). The wallet is the owner's L1 EOA or multisig; the signer is
 * the owner or one of its registered session keys. Login authorises no action by itself.
 */
import { type Address, getAddress, type Hex, recoverMessageAddress } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'

export const V3_AUTH_HEADERS = {
  wallet: 'X-DeriveWallet',
  timestamp: 'X-DeriveTimestamp',
  signature: 'X-DeriveSignature',
} as const

export interface V3LoginProof {
  wallet: Address
  /** Milliseconds since the epoch, as the decimal string that was signed. */
  timestamp: string
  signature: Hex
}

/** Signs `nowMs` for `owner` with the owner key or a session key. */
export async function signV3Login(owner: Address, signerKey: Hex, nowMs: number): Promise<V3LoginProof> {
  const timestamp = String(Math.floor(nowMs))
  const signature = await privateKeyToAccount(signerKey).signMessage({ message: timestamp })
  return { wallet: getAddress(owner), timestamp, signature }
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
export async function recoverV3LoginSigner(timestamp: string, signature: Hex): Promise<Address> {
  return recoverMessageAddress({ message: timestamp, signature })
}
