/**
 * Deposit addresses (spec 2.1 rules 2–4): `m/44'/60'/0'/0/{hd_index}` from MASTER_MNEMONIC,
 * the standard Ethereum path, so an ordinary wallet recovers the same addresses. The API derives
 * the same addresses from DEPOSIT_XPUB, the public key of `m/44'/60'/0'`, and holds no private key.
 *
 * The mnemonic's PBKDF2 (about 13 ms) and the hardened steps run once, when the keyring is
 * built at start-up; each address after that is one non-hardened child step.
 */

import { secp256k1 } from '@noble/curves/secp256k1.js'
import { HDKey } from '@scure/bip32'
import { mnemonicToSeedSync } from '@scure/bip39'
import { Lru } from '@wh/core'
import { type Address, bytesToHex, getAddress, keccak256, type LocalAccount } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'

/** The account-level parent of every deposit address. */
export const DEPOSIT_PARENT_PATH = "m/44'/60'/0'/0"
/** BIP-32 non-hardened child indexes end here. */
export const MAX_HD_INDEX = 0x7fffffff

export interface DepositKey {
  readonly hdIndex: number
  /** EIP-55 */
  readonly address: Address
}

export interface DepositSigner extends DepositKey {
  /** signs the sweep of this deposit address; same key as the address shown to the user */
  readonly account: LocalAccount
}

function assertIndex(hdIndex: number): void {
  if (!Number.isInteger(hdIndex) || hdIndex < 0 || hdIndex > MAX_HD_INDEX) {
    throw new RangeError(`hd_index must be an integer in [0, ${MAX_HD_INDEX}]`)
  }
}

function addressOfPublicKey(compressed: Uint8Array): Address {
  const uncompressed = secp256k1.Point.fromBytes(compressed).toBytes(false)
  const hash = keccak256(uncompressed.subarray(1), 'bytes')
  return getAddress(bytesToHex(hash.subarray(12)))
}

/**
 * Derives deposit addresses, and (when it holds the private key) their signers.
 * Build it once per process with `DepositKeyring.fromMnemonic`.
 *
 * @example
 *   const keyring = DepositKeyring.fromMnemonic(config.keys.masterMnemonic)
 *   keyring.address(0) // '0xf39F…2266' for the standard test mnemonic
 */
export class DepositKeyring {
  readonly #parent: HDKey
  readonly #addresses: Lru<number, Address>

  private constructor(parent: HDKey, cacheSize: number) {
    this.#parent = parent
    this.#addresses = new Lru(cacheSize)
  }

  /**
   * A keyring that can derive addresses but never sign, from the account's extended public key
   * (DEPOSIT_XPUB, `m/44'/60'/0'`): what the API holds. Its addresses are those of
   * `fromMnemonic` for the mnemonic the xpub came from (the worker checks they agree at start).
   */
  static fromExtendedPublicKey(xpub: string, opts: { cacheSize?: number } = {}): DepositKeyring {
    const account = HDKey.fromExtendedKey(xpub)
    if (account.privateKey) throw new Error('an extended private key was given where the public one belongs')
    if (account.depth !== 3) throw new Error("the extended public key is not the account key m/44'/60'/0' (depth 3)")
    // the external chain, `/0`: non-hardened, so derivable from the public key alone
    return new DepositKeyring(account.deriveChild(0), opts.cacheSize ?? 100_000)
  }

  static fromMnemonic(mnemonic: string, opts: { cacheSize?: number } = {}): DepositKeyring {
    const seed = mnemonicToSeedSync(mnemonic)
    const parent = HDKey.fromMasterSeed(seed).derive(DEPOSIT_PARENT_PATH)
    seed.fill(0)
    return new DepositKeyring(parent, opts.cacheSize ?? 100_000)
  }

  /**
   * A keyring that can derive addresses but cannot sign: what the API holds.
   * The extended public key is all an address needs.
   */
  publicOnly(opts: { cacheSize?: number } = {}): DepositKeyring {
    return new DepositKeyring(HDKey.fromExtendedKey(this.#parent.publicExtendedKey), opts.cacheSize ?? 100_000)
  }

  get canSign(): boolean {
    return this.#parent.privateKey !== null
  }

  /** The deposit address of `hdIndex`, EIP-55. Immutable per index, so it is cached. */
  address(hdIndex: number): Address {
    assertIndex(hdIndex)
    const hit = this.#addresses.get(hdIndex)
    if (hit) return hit
    const child = this.#parent.deriveChild(hdIndex)
    const address = addressOfPublicKey(child.publicKey as Uint8Array)
    this.#addresses.set(hdIndex, address)
    return address
  }

  /** The address and the account that signs for it: one derivation, so they cannot disagree. */
  signer(hdIndex: number): DepositSigner {
    assertIndex(hdIndex)
    const child = this.#parent.deriveChild(hdIndex)
    if (!child.privateKey) throw new Error('this keyring holds no private key (public-only)')
    const account = privateKeyToAccount(bytesToHex(child.privateKey))
    child.wipePrivateData()
    const address = addressOfPublicKey(child.publicKey as Uint8Array)
    if (address !== account.address) throw new Error('derived signer does not match derived address')
    return { hdIndex, address, account }
  }
}
