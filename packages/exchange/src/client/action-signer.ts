/**
 * Builds the signature fields of a Derive action (nonce, signer, signature_expiry_sec,
 * signature) with the session key, for the smart-contract wallet that owns the subaccounts.
 */
import type { Address, Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { signAction } from '../protocol/action'
import type { DeriveContracts } from '../protocol/constants'
import { NonceGenerator } from '../protocol/nonce'

export interface SignedFields {
  nonce: number
  signer: Address
  signature_expiry_sec: number
  signature: Hex
}

/** Derive wants an expiry more than five minutes out; one hour leaves room for slow queues. */
export const DEFAULT_SIGNATURE_TTL_SEC = 3_600

export class ActionSigner {
  readonly signer: Address
  readonly #nonces: NonceGenerator
  constructor(
    readonly wallet: Address,
    private readonly sessionKey: Hex,
    readonly chainId: number,
    readonly contracts: DeriveContracts,
    private readonly nowMs: () => number,
    private readonly ttlSec: number = DEFAULT_SIGNATURE_TTL_SEC,
  ) {
    this.signer = privateKeyToAccount(sessionKey).address
    this.#nonces = new NonceGenerator(nowMs)
  }

  /** Signs `data` for `module` on `subaccountId` (0 for a subaccount being created). */
  async sign(subaccountId: number, module: Address, data: Hex, expirySec?: number): Promise<SignedFields> {
    const nonce = this.#nonces.next()
    const signature_expiry_sec = expirySec ?? Math.floor(this.nowMs() / 1000) + this.ttlSec
    const signature = await signAction(
      {
        subaccountId: BigInt(subaccountId),
        nonce,
        module,
        data,
        expirySec: BigInt(signature_expiry_sec),
        owner: this.wallet,
        signer: this.signer,
      },
      this.chainId,
      this.contracts.matching,
      this.sessionKey,
    )
    return { nonce: Number(nonce), signer: this.signer, signature_expiry_sec, signature }
  }
}
