import { describe, expect, it } from 'vitest'
import { compileBalanceReader } from '../../scripts/solc'
import { balanceReaderAbi, balanceReaderBytecode, balanceReaderCompilerVersion } from './balance-reader.gen'

describe('the committed BalanceReader artifact', () => {
  it('is what the pinned solc makes of contracts/BalanceReader.sol (else: pnpm --filter @wh/wallet compile:contracts)', () => {
    const fresh = compileBalanceReader()
    expect(balanceReaderCompilerVersion).toBe(fresh.compilerVersion)
    expect(balanceReaderAbi).toEqual(fresh.abi)
    expect(balanceReaderBytecode).toBe(fresh.bytecode)
  }, 60_000)

  it('takes the addresses as one packed bytes argument of its constructor (the deployless read appends it)', () => {
    const ctor = balanceReaderAbi.find((e) => e.type === 'constructor')
    expect(ctor && 'inputs' in ctor && ctor.inputs.map((i) => i.type)).toEqual(['bytes'])
    expect(balanceReaderAbi.map((e) => e.type).sort()).toEqual(['constructor', 'error', 'error'])
  })
})
