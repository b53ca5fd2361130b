import { describe, expect, it } from 'vitest'
import { compileSwapContracts } from '../../scripts/solc'
import { poolAbi, poolBytecode, poolCompilerVersion } from './pool'
import { testWethAbi, testWethBytecode, testWethCompilerVersion } from './test-weth'

const COMMITTED = {
  ConstantProductPool: { abi: poolAbi, bytecode: poolBytecode, version: poolCompilerVersion },
  TestWETH: { abi: testWethAbi, bytecode: testWethBytecode, version: testWethCompilerVersion },
} as const

const names = (abi: readonly { type: string; name?: string }[]) => abi.map((e) => `${e.type}:${e.name ?? ''}`)

describe('the committed swap contract artifacts', () => {
  it('are what the pinned solc makes of contracts/*.sol (else: pnpm --filter @wh/swap compile:contracts)', () => {
    for (const fresh of compileSwapContracts()) {
      const committed = COMMITTED[fresh.name]
      expect(committed.version, fresh.name).toBe(fresh.compilerVersion)
      expect(committed.abi, fresh.name).toEqual(fresh.abi)
      expect(committed.bytecode, fresh.name).toBe(fresh.bytecode)
    }
  }, 60_000)

  it('the pool has the swap surface the adapter calls', () => {
    for (const n of [
      'function:swapExactIn',
      'function:getAmountOut',
      'function:addLiquidity',
      'function:reserve0',
      'function:reserve1',
      'error:InsufficientOutput',
      'error:Expired',
      'event:Swap',
    ])
      expect(names(poolAbi)).toContain(n)
  })

  it('TestWETH is an 18-decimal ERC-20 with an owner mint', () => {
    for (const n of [
      'function:transfer',
      'function:approve',
      'function:transferFrom',
      'function:mint',
      'event:Transfer',
    ])
      expect(names(testWethAbi)).toContain(n)
  })
})
