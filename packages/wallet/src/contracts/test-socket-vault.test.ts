import { toFunctionSelector } from 'viem'
import { describe, expect, it } from 'vitest'
import { compileTestSocketVault } from '../../scripts/solc'
import { socketVaultAbi } from '../bridge/derive'
import { testSocketVaultAbi, testSocketVaultBytecode, testSocketVaultCompilerVersion } from './test-socket-vault'

describe('the committed TestSocketVault artifact', () => {
  it('is what the pinned solc makes of contracts/TestSocketVault.sol (else: pnpm --filter @wh/wallet compile:contracts)', () => {
    const fresh = compileTestSocketVault()
    expect(testSocketVaultCompilerVersion).toBe(fresh.compilerVersion)
    expect(testSocketVaultAbi).toEqual(fresh.abi)
    expect(testSocketVaultBytecode).toBe(fresh.bytecode)
  }, 60_000)

  it("implements every function and the event of the adapter's vault ABI, with the same signatures", () => {
    const selectors = new Set(
      testSocketVaultAbi.filter((e) => e.type === 'function').map((e) => toFunctionSelector(e as never)),
    )
    for (const f of socketVaultAbi.filter((e) => e.type === 'function')) {
      expect(selectors.has(toFunctionSelector(f as never)), f.name).toBe(true)
    }
    const deposit = testSocketVaultAbi.find((e) => e.type === 'function' && e.name === 'depositToAppChain')
    expect(deposit).toMatchObject({ stateMutability: 'payable' })
    const event = testSocketVaultAbi.find((e) => e.type === 'event' && e.name === 'TokensDeposited')
    const expected = socketVaultAbi.find((e) => e.type === 'event')
    expect(event && 'inputs' in event && event.inputs.map((i) => [i.type, i.name, i.indexed])).toEqual(
      expected && 'inputs' in expected && expected.inputs.map((i) => [i.type, i.name, i.indexed]),
    )
  })
})
