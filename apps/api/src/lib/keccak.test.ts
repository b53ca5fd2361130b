import { getAddress, toBytes, keccak256 as viemKeccak } from 'viem'
import { describe, expect, it } from 'vitest'
import { keccak256, keccak256PureJs, keccakBackend, toChecksumAddress } from './keccak'

describe('keccak-256', () => {
  it('is native on this machine and agrees with the pure-JS hash and viem', () => {
    expect(keccakBackend).toBe('native')
    for (const s of ['', 'abc', 'x'.repeat(1000), '\x19Ethereum Signed Message:\n3abc']) {
      const bytes = toBytes(s)
      const hex = `0x${Buffer.from(keccak256(bytes)).toString('hex')}`
      expect(hex).toBe(viemKeccak(bytes))
      expect(Buffer.from(keccak256PureJs(bytes)).toString('hex')).toBe(hex.slice(2))
    }
  })

  it('computes EIP-55 checksums like viem', () => {
    for (const a of [
      '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266',
      '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
      '0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF',
      '0x0000000000000000000000000000000000000000',
    ]) {
      expect(toChecksumAddress(a)).toBe(getAddress(a.toLowerCase()))
    }
  })
})
