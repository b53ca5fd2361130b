import { keccak256, recoverAddress } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { describe, expect, it } from 'vitest'
import { actionHash, recoverActionSigner, signAction, typedDataHash, typedDataHashFromParts } from './action'
import { DERIVE_MAINNET, DERIVE_TESTNET, domainSeparator } from './constants'
import { encodeTradeData } from './module-data'

describe('action signing', () => {
  it('reproduces the published domain separators of mainnet (957) and testnet (901)', () => {
    expect(domainSeparator(957, DERIVE_MAINNET.matching)).toBe(
      '0xd96e5f90797da7ec8dc4e276260c7f3f87fedf68775fbe1ef116e996fc60441b',
    )
    expect(domainSeparator(901, DERIVE_TESTNET.matching)).toBe(
      '0x9bcf4dc06df5d8bf23af818d5716491b995020f377d3b7b64c29ed14e3dd1105',
    )
  })

  const key = generatePrivateKey()
  const signer = privateKeyToAccount(key).address
  const action = {
    subaccountId: 144481n,
    nonce: 1755550000000001n,
    module: DERIVE_MAINNET.tradeModule,
    data: encodeTradeData({
      asset: '0x4BB4C3CDc7562f08e9910A0C7D8bB7e108861eB4',
      subId: 39614082287924319838483674368n,
      limitPriceE18: 41_500_000_000_000_000_000n,
      amountE18: 300_000_000_000_000_000n,
      maxFeeE18: 1000n * 10n ** 18n,
      recipientId: 144481n,
      isBid: false,
    }),
    expirySec: 1790000000n,
    owner: '0x8772185a1516f0d61fC1c2524926BfC69F95d698' as const,
    signer,
  }

  it('the EIP-712 hash equals keccak(0x1901 ‖ domain separator ‖ action hash)', () => {
    expect(typedDataHash(action, 957, DERIVE_MAINNET.matching)).toBe(
      typedDataHashFromParts(action, 957, DERIVE_MAINNET.matching),
    )
  })

  it('trade module data is seven 32-byte words', () => {
    expect((action.data.length - 2) / 64).toBe(7)
  })

  it('a signature recovers to the signer, and any changed field recovers to someone else', async () => {
    const sig = await signAction(action, 957, DERIVE_MAINNET.matching, key)
    expect(await recoverActionSigner(action, 957, DERIVE_MAINNET.matching, sig)).toBe(signer)
    const tampered = { ...action, nonce: action.nonce + 1n }
    expect(await recoverActionSigner(tampered, 957, DERIVE_MAINNET.matching, sig)).not.toBe(signer)
    expect(
      await recoverAddress({ hash: typedDataHash(action, 901, DERIVE_MAINNET.matching), signature: sig }),
    ).not.toBe(signer)
  })

  it('the action hash commits to keccak(data), not to the data itself', () => {
    expect(actionHash(action)).not.toBe(actionHash({ ...action, data: keccak256(action.data) }))
  })
})
