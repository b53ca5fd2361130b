/**
 * Derive's signed action: the EIP-712 struct every state-changing request carries.
 *   action_hash     = keccak256(abi.encode(ACTION_TYPEHASH, subaccount_id, nonce, module, keccak256(data), expiry, owner, signer))
 *   typed_data_hash = keccak256(0x1901 ‖ DOMAIN_SEPARATOR ‖ action_hash)
 * The signature is over typed_data_hash by the signer (owner or session key).
 */
import {
  type Address,
  concat,
  encodeAbiParameters,
  getAddress,
  type Hex,
  hashTypedData,
  keccak256,
  recoverAddress,
} from 'viem'
import { sign } from 'viem/accounts'
import { ACTION_TYPEHASH, domainSeparator, matchingDomain } from './constants'

export interface ActionFields {
  subaccountId: bigint
  nonce: bigint
  module: Address
  /** ABI-encoded module data. */
  data: Hex
  /** signature_expiry_sec */
  expirySec: bigint
  /** The wallet owning the subaccount (our smart-contract wallet). */
  owner: Address
  /** Who signs: the owner or a registered session key. */
  signer: Address
}

/** The intermediate hashes `*_debug` methods return, to make signature bugs visible. */
export interface ActionDebug {
  encoded_data: Hex
  encoded_data_hashed: Hex
  action_hash: Hex
  typed_data_hash: Hex
}

/** The Action struct as EIP-712 types (v2 and v3 alike). */
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

/** The digest the signer signs (EIP-712 typed data hash under the Matching domain). */
export function typedDataHash(a: ActionFields, chainId: number, matching: Address): Hex {
  return hashTypedData({
    domain: matchingDomain(chainId, matching),
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

/** The same digest assembled by hand from the domain separator, as Derive documents it. */
export function typedDataHashFromParts(a: ActionFields, chainId: number, matching: Address): Hex {
  return keccak256(concat(['0x1901', domainSeparator(chainId, matching), actionHash(a)]))
}

export function actionDebug(a: ActionFields, chainId: number, matching: Address): ActionDebug {
  return {
    encoded_data: a.data,
    encoded_data_hashed: keccak256(a.data),
    action_hash: actionHash(a),
    typed_data_hash: typedDataHash(a, chainId, matching),
  }
}

/** Signs an action with a private key; returns the 65-byte signature as hex. */
export async function signAction(a: ActionFields, chainId: number, matching: Address, privateKey: Hex): Promise<Hex> {
  return sign({ hash: typedDataHash(a, chainId, matching), privateKey, to: 'hex' })
}

/** Recovers who signed an action; throws on a malformed signature. */
export async function recoverActionSigner(
  a: ActionFields,
  chainId: number,
  matching: Address,
  signature: Hex,
): Promise<Address> {
  return recoverAddress({ hash: typedDataHash(a, chainId, matching), signature })
}
