/**
 * Request authentication (docs.derive.xyz "Session login"): the signer personal_signs
 * (EIP-191) the current time in milliseconds as a decimal string. It authorises nothing;
 * it only proves the caller holds the owner key or a registered session key of the wallet.
 */
import { type Address, type Hex, recoverMessageAddress } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'

export const AUTH_HEADERS = {
  wallet: 'X-DeriveWallet',
  timestamp: 'X-DeriveTimestamp',
  signature: 'X-DeriveSignature',
} as const

/** The older spelling, still accepted by Derive and by our simulator. */
export const LEGACY_AUTH_HEADERS = {
  wallet: 'X-LyraWallet',
  timestamp: 'X-LyraTimestamp',
  signature: 'X-LyraSignature',
} as const

export interface AuthProof {
  wallet: Address
  timestamp: string
  signature: Hex
}

/** Signs `timestampMs` for `wallet` with the session key. */
export async function signAuthProof(wallet: Address, privateKey: Hex, timestampMs: number): Promise<AuthProof> {
  const timestamp = String(Math.floor(timestampMs))
  const signature = await privateKeyToAccount(privateKey).signMessage({ message: timestamp })
  return { wallet, timestamp, signature }
}

/** Who signed the timestamp; throws on a malformed signature. */
export async function recoverAuthSigner(timestamp: string, signature: Hex): Promise<Address> {
  return recoverMessageAddress({ message: timestamp, signature })
}
