import { getAddress, type Hex, keccak256 } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { describe, expect, it } from 'vitest'
import type { ActionFields } from './action'
import {
  actionHash,
  recoverV3ActionSigner,
  signV3Action,
  v3ActionDebug,
  v3TypedDataHash,
  v3TypedDataHashViaEip712,
} from './action'
import { ACTION_TYPEHASH, V3_MODULES, V3_TESTNET_CHAIN_ID, v3DomainSeparator } from './constants'
import { encodeTradeDataV3 } from './module-data'
import { goldenCase, PY, TS } from './test-vectors'

describe('v3 EIP-712 domain', () => {
  it('reproduces the published separators: Ethereum (chain 1) and Sepolia (chain 11155111)', () => {
    // derivexyz/derive-py@92fa887:derive_py/config/contracts.py (Chain.ETHEREUM / Chain.SEPOLIA);
    // the Sepolia one also derivexyz/derive-rs@aeb9a70:src/actions/action.rs (Environment::Testnet).
    expect(v3DomainSeparator(1)).toBe('0xda616dfabb88681b08e1592820a41d55ddc62d68de110e327ae99d734506fe19')
    expect(v3DomainSeparator(11_155_111)).toBe('0x24d674cd5f2b9d564691c51e9d88f649b99246a2244dd74ce27b96578d773e85')
  })

  it('has the published Action type hash (derive-ts@a58797b:test/unit/fixtures/golden-vectors.json actionTypehash)', () => {
    expect(ACTION_TYPEHASH).toBe(TS.actionTypehash)
  })
})

/** The trade action derive-py pinned; the v3 testnet returned its hashes from private/order_debug. */
function pyTradeAction(): ActionFields {
  const c = PY.c
  return {
    subaccountId: BigInt(c.SUBACCOUNT_ID),
    nonce: BigInt(c.NONCE),
    module: V3_MODULES.trade,
    data: encodeTradeDataV3({
      asset: c.OPTION_A_ADDRESS as Hex,
      subId: BigInt(c.OPTION_A_SUB_ID),
      limitPriceE18: 100n * 10n ** 18n,
      amountE18: 10n ** 18n,
      maxFeeE18: 1000n * 10n ** 18n,
      recipientId: BigInt(c.SUBACCOUNT_ID),
      isBid: true,
    }),
    expirySec: BigInt(c.EXPIRY),
    owner: c.OWNER_ADDRESS as Hex,
    signer: privateKeyToAccount(PY.key).address,
  }
}

describe('server-captured v3 testnet trade (derivexyz/derive-py@92fa887:tests/test_action_signing/expected.py)', () => {
  const action = pyTradeAction()
  const sepolia = { chainId: V3_TESTNET_CHAIN_ID }

  it('the SDK test key is the signer the vector was captured with', () => {
    expect(action.signer).toBe(PY.c.SIGNER_ADDRESS)
  })

  it('reproduces the encoded data, action hash and typed-data hash the server computed', () => {
    const debug = v3ActionDebug(action, sepolia)
    expect(debug.encoded_data).toBe(PY.c.EXPECTED_TRADE)
    expect(debug.action_hash).toBe(PY.c.EXPECTED_ACTION_HASH)
    expect(debug.typed_data_hash).toBe(PY.c.EXPECTED_TYPED_DATA_HASH)
    expect(debug.domain_separator).toBe(PY.domain_separator_sepolia)
  })

  it('viem eth_signTypedData hashing of the same struct gives the same digest', () => {
    expect(v3TypedDataHashViaEip712(action, V3_TESTNET_CHAIN_ID)).toBe(PY.c.EXPECTED_TYPED_DATA_HASH)
  })

  it('reproduces the signature byte for byte (published unprefixed)', async () => {
    expect(await signV3Action(action, sepolia, PY.key)).toBe(`0x${PY.c.EXPECTED_SIGNATURE}`)
  })

  it('the same action under the mainnet domain is a different digest, so a testnet signature cannot replay', async () => {
    const sig = await signV3Action(action, sepolia, PY.key)
    expect(await recoverV3ActionSigner(action, { chainId: 1 }, sig)).not.toBe(action.signer)
    expect(await recoverV3ActionSigner(action, sepolia, sig)).toBe(action.signer)
  })
})

describe('derive-ts golden vectors (derivexyz/derive-ts@a58797b:test/unit/fixtures/golden-vectors.json)', () => {
  it('the Hardhat development key derives the recorded signer', () => {
    expect(privateKeyToAccount(TS.signerPrivateKey).address).toBe(TS.signerAddress)
  })

  for (const name of ['envelope-minimal', 'envelope-large', 'trade', 'transfer', 'withdrawal']) {
    it(`reproduces ${name}: action hash, typed-data hash and signature`, async () => {
      const g = goldenCase(name)
      const a: ActionFields = {
        subaccountId: BigInt(g.inputs.subaccount_id),
        nonce: BigInt(g.inputs.nonce),
        module: g.inputs.module,
        data: g.dataHex,
        expirySec: BigInt(g.inputs.signature_expiry_sec),
        owner: getAddress(g.inputs.owner),
        signer: getAddress(g.inputs.signer),
      }
      const domain = { domainSeparator: TS.domainSeparator }
      expect(actionHash(a)).toBe(g.actionHash)
      expect(v3TypedDataHash(a, domain)).toBe(g.typedDataHash)
      expect(await signV3Action(a, domain, TS.signerPrivateKey)).toBe(g.signature)
    })
  }

  it('refuses a domain separator that is not 32 bytes', () => {
    const g = goldenCase('envelope-minimal')
    const a = {
      subaccountId: 1n,
      nonce: BigInt(g.inputs.nonce),
      module: g.inputs.module,
      data: g.dataHex,
      expirySec: 1n,
      owner: g.inputs.owner,
      signer: g.inputs.signer,
    }
    expect(() => v3TypedDataHash(a, { domainSeparator: '0x1234' })).toThrow(/32 bytes/)
  })
})

describe('what a signature binds', () => {
  const action = pyTradeAction()
  const sepolia = { chainId: V3_TESTNET_CHAIN_ID }

  it('recovers to the signer, and a changed field or domain recovers to someone else', async () => {
    const sig = await signV3Action(action, sepolia, PY.key)
    expect(await recoverV3ActionSigner(action, sepolia, sig)).toBe(action.signer)
    for (const tampered of [
      { ...action, nonce: action.nonce + 1n },
      { ...action, subaccountId: action.subaccountId + 1n },
      { ...action, expirySec: action.expirySec + 1n },
      { ...action, module: V3_MODULES.withdrawal },
    ])
      expect(await recoverV3ActionSigner(tampered, sepolia, sig)).not.toBe(action.signer)
    expect(await recoverV3ActionSigner(action, { chainId: 1 }, sig)).not.toBe(action.signer)
  })

  it('the action hash commits to keccak(data), not to the data itself', () => {
    expect(actionHash(action)).not.toBe(actionHash({ ...action, data: keccak256(action.data) }))
  })
})
