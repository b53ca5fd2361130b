import { HDKey } from '@scure/bip32'
import { mnemonicToSeedSync } from '@scure/bip39'
import { depositXpubOf } from '@wh/config'
import { TEST_DEPOSIT_XPUB } from '@wh/testkit'
import { mnemonicToAccount } from 'viem/accounts'
import { describe, expect, it } from 'vitest'
import { DepositKeyring, MAX_HD_INDEX } from './hd'

const TEST_MNEMONIC = 'test test test test test test test test test test test junk'

describe('deposit keyring (spec 2.1 rules 2-4)', () => {
  const keyring = DepositKeyring.fromMnemonic(TEST_MNEMONIC)

  it("derives the standard vectors at m/44'/60'/0'/0/{i}", () => {
    expect(keyring.address(0)).toBe('0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266')
    expect(keyring.address(1)).toBe('0x70997970C51812dc3A010C7d01b50e0d17dc79C8')
  })

  it('agrees with an ordinary wallet derivation (viem mnemonicToAccount) for many indexes', () => {
    for (const i of [2, 3, 17, 1000, 123_456]) {
      expect(keyring.address(i)).toBe(mnemonicToAccount(TEST_MNEMONIC, { addressIndex: i }).address)
    }
  })

  it('gives the sweep signer the very address shown to the user', () => {
    for (const i of [0, 1, 42]) {
      const s = keyring.signer(i)
      expect(s.address).toBe(keyring.address(i))
      expect(s.account.address).toBe(keyring.address(i))
    }
  })

  it('the public-only keyring derives the same addresses and cannot sign', () => {
    const pub = keyring.publicOnly()
    expect(pub.canSign).toBe(false)
    expect(pub.address(0)).toBe('0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266')
    expect(pub.address(77)).toBe(keyring.address(77))
    expect(() => pub.signer(0)).toThrow(/public-only/)
  })

  it("the keyring of DEPOSIT_XPUB (m/44'/60'/0') derives the mnemonic's addresses and cannot sign", () => {
    const xpub = depositXpubOf(TEST_MNEMONIC)
    expect(xpub).toBe(TEST_DEPOSIT_XPUB)
    const api = DepositKeyring.fromExtendedPublicKey(xpub)
    expect(api.canSign).toBe(false)
    for (const i of [0, 1, 2, 42, 1000, 123_456, MAX_HD_INDEX]) expect(api.address(i)).toBe(keyring.address(i))
    expect(() => api.signer(0)).toThrow(/public-only/)
  })

  it('refuses an extended private key, and a key of another level, in place of DEPOSIT_XPUB', () => {
    const account = HDKey.fromMasterSeed(mnemonicToSeedSync(TEST_MNEMONIC)).derive("m/44'/60'/0'")
    expect(() => DepositKeyring.fromExtendedPublicKey(account.privateExtendedKey)).toThrow(/private/)
    expect(() => DepositKeyring.fromExtendedPublicKey(account.deriveChild(0).publicExtendedKey)).toThrow(/depth 3/)
  })

  it('refuses indexes outside the non-hardened range', () => {
    for (const bad of [-1, 1.5, MAX_HD_INDEX + 1, Number.NaN]) {
      expect(() => keyring.address(bad)).toThrow(RangeError)
    }
  })
})
