import { describe, expect, it } from 'vitest'
import { compileTestErc1271Wallet, compileTestErc1271WalletFactory } from '../../scripts/solc'
import {
  testErc1271WalletAbi,
  testErc1271WalletBytecode,
  testErc1271WalletCompilerVersion,
} from './test-erc1271-wallet.gen'
import {
  testErc1271WalletFactoryAbi,
  testErc1271WalletFactoryBytecode,
  testErc1271WalletFactoryCompilerVersion,
} from './test-erc1271-wallet-factory.gen'

describe('the committed TestErc1271Wallet artifacts', () => {
  it('are what the pinned solc makes of contracts/TestErc1271Wallet.sol (else: pnpm --filter @wh/wallet compile:contracts)', () => {
    const wallet = compileTestErc1271Wallet()
    expect(testErc1271WalletCompilerVersion).toBe(wallet.compilerVersion)
    expect(testErc1271WalletAbi).toEqual(wallet.abi)
    expect(testErc1271WalletBytecode).toBe(wallet.bytecode)
    const factory = compileTestErc1271WalletFactory()
    expect(testErc1271WalletFactoryCompilerVersion).toBe(factory.compilerVersion)
    expect(testErc1271WalletFactoryAbi).toEqual(factory.abi)
    expect(testErc1271WalletFactoryBytecode).toBe(factory.bytecode)
  }, 60_000)

  it('the wallet answers ERC-1271 isValidSignature(bytes32, bytes) returning bytes4', () => {
    const fn = testErc1271WalletAbi.find((e) => e.type === 'function' && e.name === 'isValidSignature')
    expect(fn && 'inputs' in fn && fn.inputs.map((i) => i.type)).toEqual(['bytes32', 'bytes'])
    expect(fn && 'outputs' in fn && fn.outputs.map((o) => o.type)).toEqual(['bytes4'])
  })
})
