/**
 * Derive's signed action (docs/exchange-v3.md, "Signed actions"): the EIP-712 struct every
 * state-changing request carries.
 *   action_hash     = keccak256(abi.encode(ACTION_TYPEHASH, subaccount_id, nonce, module, keccak256(data), expiry, owner, signer))
 *   typed_data_hash = keccak256(0x1901 ‖ DOMAIN_SEPARATOR ‖ action_hash)
 * The domain is the Matching domain on Ethereum (chain 1) or Sepolia (11155111) with a constant
 * verifying contract; the owner is the L1 EOA or multisig itself; the nonce is UTC nanoseconds.
 * The signature is over typed_data_hash by the signer (owner or session key), 65-byte r‖s‖v with
 * `v` 27/28.
 */
import {
  type Address,
  concat,
  encodeAbiParameters,
  getAddress,
  type Hex,
  hashTypedData,
  isHex,
  keccak256,
  recoverAddress,
  size,
} from 'viem'
import { sign } from 'viem/accounts'
import { ACTION_TYPEHASH, v3Domain, v3DomainSeparator } from './constants'

export interface ActionFields {
  subaccountId: bigint
  nonce: bigint
  module: Address
  /** ABI-encoded module data. */
  data: Hex
  /** signature_expiry_sec */
  expirySec: bigint
  /** The owner of the subaccount: the platform's own L1 address (no Derive Wallet). */
  owner: Address
  /** Who signs: the owner or a registered session key. */
  signer: Address
}

/** The Action struct as EIP-712 types. */
export const ACTION_TYPES = {
  Action: [
    { name: 'subaccountId', type: 'uint256' },
    { name: 'nonce', type: 'uint256' },
    { name: 'module', type: 'address' },
    { name: 'data', type: 'bytes' },
    { name: 'expiry', type: 'uint256' },
    { name: 'owner', type: 'address' },
    { name: 'signer', type: 'address' },
  ],
} as const

/** hashStruct(Action). */
export function actionHash(a: ActionFields): Hex {
  return keccak256(
    encodeAbiParameters(
      [
        { type: 'bytes32' },
        { type: 'uint256' },
        { type: 'uint256' },
        { type: 'address' },
        { type: 'bytes32' },
        { type: 'uint256' },
        { type: 'address' },
        { type: 'address' },
      ],
      [
        ACTION_TYPEHASH,
        a.subaccountId,
        a.nonce,
        getAddress(a.module),
        keccak256(a.data),
        a.expirySec,
        getAddress(a.owner),
        getAddress(a.signer),
      ],
    ),
  )
}

/** Where an action is verified: a chain id (and the verifying contract, constant in v3) or a published separator. */
export type V3DomainRef = { chainId: number; verifyingContract?: Address } | { domainSeparator: Hex }

function separatorOf(domain: V3DomainRef): Hex {
  if ('domainSeparator' in domain) {
    if (!isHex(domain.domainSeparator) || size(domain.domainSeparator) !== 32) {
      throw new Error('domainSeparator must be 32 bytes of hex')
    }
    return domain.domainSeparator
  }
  return v3DomainSeparator(domain.chainId, domain.verifyingContract)
}

/** The digest the signer signs, assembled as Derive documents it: keccak(0x1901 ‖ separator ‖ action hash). */
export function v3TypedDataHash(a: ActionFields, domain: V3DomainRef): Hex {
  return keccak256(concat(['0x1901', separatorOf(domain), actionHash(a)]))
}

/** The same digest through viem's generic EIP-712 hashing (what a wallet's eth_signTypedData_v4 signs). */
export function v3TypedDataHashViaEip712(a: ActionFields, chainId: number, verifyingContract?: Address): Hex {
  return hashTypedData({
    domain: v3Domain(chainId, verifyingContract),
    types: ACTION_TYPES,
    primaryType: 'Action',
    message: {
      subaccountId: a.subaccountId,
      nonce: a.nonce,
      module: getAddress(a.module),
      data: a.data,
      expiry: a.expirySec,
      owner: getAddress(a.owner),
      signer: getAddress(a.signer),
    },
  })
}

/** Signs with the signer's private key; returns 0x-prefixed r‖s‖v (strip the 0x where a route wants it bare). */
export async function signV3Action(a: ActionFields, domain: V3DomainRef, privateKey: Hex): Promise<Hex> {
  return sign({ hash: v3TypedDataHash(a, domain), privateKey, to: 'hex' })
}

/** Who signed an action; throws on a malformed signature. */
export async function recoverV3ActionSigner(a: ActionFields, domain: V3DomainRef, signature: Hex): Promise<Address> {
  return recoverAddress({ hash: v3TypedDataHash(a, domain), signature })
}

/** What the `*_debug` routes return, for byte comparison with the server. */
export function v3ActionDebug(a: ActionFields, domain: V3DomainRef) {
  return {
    encoded_data: a.data,
    encoded_data_hashed: keccak256(a.data),
    action_hash: actionHash(a),
    typed_data_hash: v3TypedDataHash(a, domain),
    domain_separator: separatorOf(domain),
  }
}
