import { describe, expect, it } from 'vitest'
import {
  compileContract,
  TEST_ERC1967_PROXY,
  TEST_ERC4337_ACCOUNT,
  TEST_HOSTILE_TOKEN,
  TEST_SAFE_PROXY,
  TEST_SAFE_SINGLETON,
} from '../../scripts/solc'
import * as erc1967 from './test-erc1967-proxy.gen'
import * as erc4337 from './test-erc4337-account.gen'
import * as hostile from './test-hostile-token.gen'
import * as safeProxy from './test-safe-proxy.gen'
import * as safeSingleton from './test-safe-singleton.gen'

/** The committed artifacts of the outbound policy's measurements and of the hostile-destination suite. */
const ARTIFACTS = [
  [
    TEST_SAFE_PROXY,
    safeProxy.testSafeProxyCompilerVersion,
    safeProxy.testSafeProxyAbi,
    safeProxy.testSafeProxyBytecode,
  ],
  [
    TEST_SAFE_SINGLETON,
    safeSingleton.testSafeSingletonCompilerVersion,
    safeSingleton.testSafeSingletonAbi,
    safeSingleton.testSafeSingletonBytecode,
  ],
  [
    TEST_ERC1967_PROXY,
    erc1967.testErc1967ProxyCompilerVersion,
    erc1967.testErc1967ProxyAbi,
    erc1967.testErc1967ProxyBytecode,
  ],
  [
    TEST_ERC4337_ACCOUNT,
    erc4337.testErc4337AccountCompilerVersion,
    erc4337.testErc4337AccountAbi,
    erc4337.testErc4337AccountBytecode,
  ],
  [
    TEST_HOSTILE_TOKEN,
    hostile.testHostileTokenCompilerVersion,
    hostile.testHostileTokenAbi,
    hostile.testHostileTokenBytecode,
  ],
] as const

describe('the committed Safe-like, ERC-4337-like and hostile-token artifacts', () => {
  it.each(ARTIFACTS)(
    '%o is what the pinned solc makes of its source (else: pnpm --filter @wh/wallet compile:contracts)',
    (spec, version, abi, bytecode) => {
      const fresh = compileContract(spec)
      expect(version).toBe(fresh.compilerVersion)
      expect(abi).toEqual(fresh.abi)
      expect(bytecode).toBe(fresh.bytecode)
    },
    60_000,
  )
})
