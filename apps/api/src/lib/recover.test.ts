import { privateKeyToAccount } from 'viem/accounts'
import { describe, expect, it } from 'vitest'
import { recoverBackend, recoverPersonalSigner, recoverPureJs } from './recover'

const account = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80')

describe('personal-message recovery', () => {
  it('uses the native backend on this machine', () => {
    expect(recoverBackend).toBe('native')
  })

  it('recovers the signer, with the native and the pure-JS backend alike', async () => {
    for (const message of ['hello', 'ünïcode ✓', 'x'.repeat(2000)]) {
      const sig = await account.signMessage({ message })
      expect(recoverPersonalSigner(message, sig)).toBe(account.address.toLowerCase())
      expect(recoverPersonalSigner(message, sig, recoverPureJs)).toBe(account.address.toLowerCase())
    }
  })

  it('accepts v as 0/1 as well as 27/28', async () => {
    const sig = await account.signMessage({ message: 'm' })
    const v = Number.parseInt(sig.slice(-2), 16)
    const low = `${sig.slice(0, -2)}${(v - 27).toString(16).padStart(2, '0')}`
    expect(recoverPersonalSigner('m', low)).toBe(account.address.toLowerCase())
  })

  it('gives another address for another message, and nothing for malformed signatures', async () => {
    const sig = await account.signMessage({ message: 'a' })
    expect(recoverPersonalSigner('b', sig)).not.toBe(account.address.toLowerCase())
    expect(recoverPersonalSigner('a', sig.slice(0, -2))).toBeUndefined()
    expect(recoverPersonalSigner('a', `${sig.slice(0, -2)}1d`)).toBeUndefined()
    expect(recoverPersonalSigner('a', `0x${'00'.repeat(65)}`)).toBeUndefined()
    expect(recoverPersonalSigner('a', 'not hex')).toBeUndefined()
  })
})
