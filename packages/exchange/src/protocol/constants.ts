/**
 * Protocol constants of Derive's action signing (docs.derive.xyz, "Protocol constants").
 * The EIP-712 domain is the Matching contract's: name "Matching", version "1.0", the Derive
 * chain id and the Matching address (v2-matching ActionVerifier: `EIP712("Matching", "1.0")`).
 * With these inputs the domain separators equal the published ones (checked in constants.test.ts).
 */
import { type Address, encodeAbiParameters, type Hex, keccak256, toHex } from 'viem'

/** keccak256("Action(uint256 subaccountId,uint256 nonce,address module,bytes data,uint256 expiry,address owner,address signer)") */
export const ACTION_TYPEHASH: Hex = '0x4d7a9f27c403ff9c0f19bce61d76d82f9aa29f8d6d4b0c5474607d9770d1af17'

/** The contracts an action names: the verifying Matching contract and one module per action kind. */
export interface DeriveContracts {
  matching: Address
  tradeModule: Address
  depositModule: Address
  withdrawalModule: Address
  transferModule: Address
  /** The standard (SRM) risk manager a new subaccount is created under. */
  standardManager: Address
}

/** Derive mainnet (chain 957), as published in the protocol constants table. */
export const DERIVE_MAINNET: DeriveContracts = {
  matching: '0xeB8d770ec18DB98Db922E9D83260A585b9F0DeAD',
  tradeModule: '0xB8D20c2B7a1Ad2EE33Bc50eF10876eD3035b5e7b',
  depositModule: '0x9B3FE5E5a3bcEa5df4E08c41Ce89C4e3Ff01Ace3',
  withdrawalModule: '0x9d0E8f5b25384C7310CB8C6aE32C8fbeb645d083',
  transferModule: '0x01259207A40925b794C8ac320456F7F6c8FE2636',
  standardManager: '0x28c9ddF9A3B29c2E6a561c1BC520954e5A33de5D',
}

/** Derive testnet (chain 901). */
export const DERIVE_TESTNET: DeriveContracts = {
  matching: '0x3cc154e220c2197c5337b7Bd13363DD127Bc0C6E',
  tradeModule: '0x87F2863866D85E3192a35A73b388BD625D83f2be',
  depositModule: '0x43223Db33AdA0575D2E100829543f8B04A37a1ec',
  withdrawalModule: '0xe850641C5207dc5E9423fB15f89ae6031A05fd92',
  transferModule: '0x0CFC1a4a90741aB242cAfaCD798b409E12e68926',
  standardManager: '0x28bE681F7bEa6f465cbcA1D25A2125fe7533391C',
}

export const DERIVE_MAINNET_CHAIN_ID = 957
export const DERIVE_TESTNET_CHAIN_ID = 901

/**
 * The contracts for a chain id: the published sets for Derive's own chains, the mainnet
 * addresses for any other id (a local simulator); the chain id still separates the domains.
 */
export function contractsForChain(chainId: number): DeriveContracts {
  return chainId === DERIVE_TESTNET_CHAIN_ID ? DERIVE_TESTNET : DERIVE_MAINNET
}

/** EIP-712 domain of the Matching contract. */
export function matchingDomain(chainId: number, matching: Address) {
  return { name: 'Matching', version: '1.0', chainId, verifyingContract: matching } as const
}

const DOMAIN_TYPEHASH = keccak256(
  toHex('EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)'),
)

/** DOMAIN_SEPARATOR = hashStruct(EIP712Domain) of the Matching contract. */
export function domainSeparator(chainId: number, matching: Address): Hex {
  return keccak256(
    encodeAbiParameters(
      [{ type: 'bytes32' }, { type: 'bytes32' }, { type: 'bytes32' }, { type: 'uint256' }, { type: 'address' }],
      [DOMAIN_TYPEHASH, keccak256(toHex('Matching')), keccak256(toHex('1.0')), BigInt(chainId), matching],
    ),
  )
}
