import { describe, expect, it } from 'vitest'
import { compileTestUsdc } from '../../scripts/solc'
import { testUsdcAbi, testUsdcBytecode, testUsdcCompilerVersion } from './test-usdc.gen'

describe('the committed TestUSDC artifact', () => {
  it('is what the pinned solc makes of contracts/TestUSDC.sol (else: pnpm --filter @wh/wallet compile:contracts)', () => {
    const fresh = compileTestUsdc()
    expect(testUsdcCompilerVersion).toBe(fresh.compilerVersion)
    expect(testUsdcAbi).toEqual(fresh.abi)
    expect(testUsdcBytecode).toBe(fresh.bytecode)
  }, 60_000)

  it('is a 6-decimal ERC-20 with the standard Transfer event and an owner-only mint', () => {
    const names = testUsdcAbi.map((e) => ('name' in e ? `${e.type}:${e.name}` : e.type))
    for (const n of [
      'function:transfer',
      'function:transferFrom',
      'function:approve',
      'function:balanceOf',
      'function:decimals',
      'function:mint',
      'event:Transfer',
      'event:Approval',
    ]) {
      expect(names).toContain(n)
    }
    const transfer = testUsdcAbi.find((e) => e.type === 'event' && e.name === 'Transfer')
    expect(transfer && 'inputs' in transfer && transfer.inputs.map((i) => [i.type, i.indexed])).toEqual([
      ['address', true],
      ['address', true],
      ['uint256', false],
    ])
  })
})
