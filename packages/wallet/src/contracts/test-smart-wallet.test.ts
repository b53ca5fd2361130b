import { describe, expect, it } from 'vitest'
import { compileTestSmartWallet } from '../../scripts/solc'
import { testSmartWalletAbi, testSmartWalletBytecode, testSmartWalletCompilerVersion } from './test-smart-wallet.gen'

describe('the committed TestSmartWallet artifact', () => {
  it('is what the pinned solc makes of contracts/TestSmartWallet.sol (else: pnpm --filter @wh/wallet compile:contracts)', () => {
    const fresh = compileTestSmartWallet()
    expect(testSmartWalletCompilerVersion).toBe(fresh.compilerVersion)
    expect(testSmartWalletAbi).toEqual(fresh.abi)
    expect(testSmartWalletBytecode).toBe(fresh.bytecode)
  }, 60_000)

  it('exposes execute(to, value, data) and a payable receive', () => {
    const names = testSmartWalletAbi.map((e) => ('name' in e ? `${e.type}:${e.name}` : e.type))
    expect(names).toContain('function:execute')
    expect(names).toContain('receive')
    const execute = testSmartWalletAbi.find((e) => e.type === 'function' && e.name === 'execute')
    expect(execute && 'inputs' in execute && execute.inputs.map((i) => i.type)).toEqual(['address', 'uint256', 'bytes'])
  })
})
