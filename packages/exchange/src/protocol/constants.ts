/**
 * Derive v3 protocol constants (docs/exchange-v3.md, "EIP-712 domain and type hashes").
 * v3 kept the Action struct of Derive's retired v2 and the EIP-712 domain name/version ("Matching", "1.0") and
 * anchors every deployment to the same verifying contract (the v2 mainnet Matching address);
 * only the chain id differs: Ethereum mainnet (1) or Sepolia (11155111). Module addresses are
 * one set for every deployment.
 */
import { type Address, encodeAbiParameters, type Hex, keccak256, toHex } from 'viem'

/** keccak256("Action(uint256 subaccountId,uint256 nonce,address module,bytes data,uint256 expiry,address owner,address signer)") */
export const ACTION_TYPEHASH: Hex = '0x4d7a9f27c403ff9c0f19bce61d76d82f9aa29f8d6d4b0c5474607d9770d1af17'

export const V3_MAINNET_CHAIN_ID = 1
export const V3_TESTNET_CHAIN_ID = 11_155_111

/** The constant EIP-712 verifying contract of every v3 deployment. */
export const V3_MATCHING_VERIFYING_CONTRACT: Address = '0xeB8d770ec18DB98Db922E9D83260A585b9F0DeAD'

/** The module each signed action names (`module` in the Action struct); one set for every deployment. */
export const V3_MODULES = {
  trade: '0xB8D20c2B7a1Ad2EE33Bc50eF10876eD3035b5e7b',
  transfer: '0x01259207A40925b794C8ac320456F7F6c8FE2636',
  withdrawal: '0x9d0E8f5b25384C7310CB8C6aE32C8fbeb645d083',
  rfq: '0x9371352CCef6f5b36EfDFE90942fFE622Ab77F1D',
  externalTransfer: '0x8F9B8f12ddA05FB1F0DDDDe8f5af8cECF54f8aC9',
  whitelistedRecipient: '0xB86D6DE1b76c9839e4BA860848CD98A1dABd6B54',
  vault: '0x2885c174ebf5524aED9c721d60c12b1537685186',
  liquidation: '0x66d23e59DaEEF13904eFA2D4B8658aeD05f59a92',
  setSessionKey: '0xe330CF64ff6EbF41699aad344Cb21d78db1D2bb6',
} as const satisfies Record<string, Address>

/**
 * Derive's v3 testnet contracts on Sepolia, the set the official SDKs name after the September 2026
 * redeploy (derive-rs 0.1.17 and 0.1.19 `src/constants.rs`, derive-py's and derive-ts's later presets,
 * read 2026-11-28; docs/exchange-v3.md "Contracts" has the sources, the dates and why this set is taken
 * as the newer one). Mainnet addresses come only from configuration (EXCHANGE_DEPOSIT_MANAGER_ADDRESS,
 * EXCHANGE_WITHDRAWAL_OUTBOX_ADDRESS), verified at start; the published mainnet set is recorded in the
 * docs, not here.
 */
export const V3_TESTNET_CONTRACTS = {
  actionManager: '0xd3625eCf97E5554C62A48Ac1c9284C9dCeFceB68',
  vapp: '0x1573bde26338A9E6AA358638679A796c81E33246',
  withdrawalOutbox: '0xFbB62CE2BbFdFdc8a60DDC22115aC29cf91B4566',
  spotVault: '0x3FB79aafCD401CDD19e3d729241545955DDE0D48',
} as const satisfies Record<string, Address>

/**
 * Testnet addresses Derive published before V3_TESTNET_CONTRACTS, newest first: a copy of docs.derive.xyz
 * `/getting-started/contracts` from before the mainnet launch (a third party pins it as the page of
 * 2026-09-11), then the SDKs' August 2026 presets. The start check names them when configuration holds one.
 */
export const V3_TESTNET_EARLIER_CONTRACTS = {
  actionManager: ['0x842C2306A17354f58Cb00853Ce3B71fB27F83557', '0x1b4f369b585D40a27F66775844FC265151f278A4'],
  vapp: ['0x1FF5A9FcD7ea4e05F556d3B2d06Aefa4467FCc27', '0x806A2f83d5E01a5526629c1A5FB4A4AAc60bc393'],
  withdrawalOutbox: ['0x1fa8Cdb4482Beb7d110d1B25ae8307b32eaEC3b7', '0x55B1A897E2ecbb4489218E961C64f3E6b1F0f988'],
  spotVault: ['0xB20790d63f648feA1A23948CDF1B8769DF78a173'],
} as const satisfies Record<keyof typeof V3_TESTNET_CONTRACTS, readonly Address[]>

/** The testnet's OnchainActionManager (L1 deposits and on-chain actions): V3_TESTNET_CONTRACTS.actionManager. */
export const V3_TESTNET_ACTION_MANAGER: Address = V3_TESTNET_CONTRACTS.actionManager

const DOMAIN_TYPEHASH = keccak256(
  toHex('EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)'),
)

/** EIP-712 domain (typed-data form) for viem's hashTypedData. */
export function v3Domain(chainId: number, verifyingContract: Address = V3_MATCHING_VERIFYING_CONTRACT) {
  return { name: 'Matching', version: '1.0', chainId, verifyingContract } as const
}

/** DOMAIN_SEPARATOR = hashStruct(EIP712Domain("Matching", "1.0", chainId, verifyingContract)). */
export function v3DomainSeparator(chainId: number, verifyingContract: Address = V3_MATCHING_VERIFYING_CONTRACT): Hex {
  return keccak256(
    encodeAbiParameters(
      [{ type: 'bytes32' }, { type: 'bytes32' }, { type: 'bytes32' }, { type: 'uint256' }, { type: 'address' }],
      [DOMAIN_TYPEHASH, keccak256(toHex('Matching')), keccak256(toHex('1.0')), BigInt(chainId), verifyingContract],
    ),
  )
}

/**
 * Protocol scope codes a session key is granted: the numbers go into the signed
 * set-session-key data, the strings travel in `protocol_scopes`.
 */
export const PROTOCOL_SCOPES = {
  admin: 0,
  withdraw: 1,
  'trade:all': 2,
  'trade:orderbook:all': 3,
  'trade:orderbook:spot': 4,
  'trade:orderbook:perp': 5,
  'trade:orderbook:option': 6,
  'trade:rfq:all': 7,
  'trade:rfq:spot': 8,
  'trade:rfq:perp': 9,
  'trade:rfq:option': 10,
  'transfer:all': 11,
  'transfer:existing_subaccount': 12,
  'transfer:new_subaccount': 13,
  'transfer:different_owner_subaccount': 14,
  /** derive-py and derive-rs spell it so; derive-ts sends 'set_session_key' (docs/exchange-v3.md). */
  create_session_key: 15,
  liquidate: 16,
  'vault:all': 17,
  'vault:curator_create': 18,
  'vault:curator_mint_and_burn': 19,
  'vault:user_deposit': 20,
  'vault:user_withdraw': 21,
  'vault:user_cancel': 22,
} as const

export type ProtocolScope = keyof typeof PROTOCOL_SCOPES
