/**
 * Compiles the contracts in contracts/ with the npm `solc` package (soljson, WebAssembly: nothing
 * is downloaded) and renders the TypeScript artifacts that runtime code and tests import. All are
 * test contracts except BalanceReader, whose creation code the deposit audit sends in an eth_call.
 * Used by the compile script, and by tests that check the committed artifacts are current.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))

/** One contract, its source and its committed artifact (exports `${prefix}Abi`, `${prefix}Bytecode`, …). */
export interface ContractSpec {
  readonly contract: string
  readonly sourcePath: string
  readonly artifactPath: string
  readonly exportPrefix: string
}

export const TEST_USDC: ContractSpec = {
  contract: 'TestUSDC',
  sourcePath: join(here, '..', 'contracts', 'TestUSDC.sol'),
  artifactPath: join(here, '..', 'src', 'contracts', 'test-usdc.gen.ts'),
  exportPrefix: 'testUsdc',
}

/** The deployless balance read of the deposit audit (docs/chains.md "Every deposit is accounted for"). */
export const BALANCE_READER: ContractSpec = {
  contract: 'BalanceReader',
  sourcePath: join(here, '..', 'contracts', 'BalanceReader.sol'),
  artifactPath: join(here, '..', 'src', 'contracts', 'balance-reader.gen.ts'),
  exportPrefix: 'balanceReader',
}

/** A smart wallet that pays by internal calls: the deposit audit's tests. */
export const TEST_SMART_WALLET: ContractSpec = {
  contract: 'TestSmartWallet',
  sourcePath: join(here, '..', 'contracts', 'TestSmartWallet.sol'),
  artifactPath: join(here, '..', 'src', 'contracts', 'test-smart-wallet.gen.ts'),
  exportPrefix: 'testSmartWallet',
}

/** A contract account that signs by ERC-1271 (its owner's key): the sign-in tests of contract accounts. */
export const TEST_ERC1271_WALLET: ContractSpec = {
  contract: 'TestErc1271Wallet',
  sourcePath: join(here, '..', 'contracts', 'TestErc1271Wallet.sol'),
  artifactPath: join(here, '..', 'src', 'contracts', 'test-erc1271-wallet.gen.ts'),
  exportPrefix: 'testErc1271Wallet',
}

/** Its CREATE2 factory, in the same file (it embeds the wallet's creation code): the ERC-6492 tests. */
export const TEST_ERC1271_WALLET_FACTORY: ContractSpec = {
  contract: 'TestErc1271WalletFactory',
  sourcePath: join(here, '..', 'contracts', 'TestErc1271Wallet.sol'),
  artifactPath: join(here, '..', 'src', 'contracts', 'test-erc1271-wallet-factory.gen.ts'),
  exportPrefix: 'testErc1271WalletFactory',
}

/** The L1 deposit entry of Derive v3, which the simulator watches (docs/exchange-v3.md "Money in"). */
export const TEST_ONCHAIN_ACTION_MANAGER: ContractSpec = {
  contract: 'TestOnchainActionManager',
  sourcePath: join(here, '..', 'contracts', 'TestOnchainActionManager.sol'),
  artifactPath: join(here, '..', 'src', 'contracts', 'test-onchain-action-manager.gen.ts'),
  exportPrefix: 'testOnchainActionManager',
}

/** The L1 payout side of Derive v3, which the simulator pays withdrawals through (docs/exchange-v3.md "Money out"). */
export const TEST_WITHDRAWAL_OUTBOX: ContractSpec = {
  contract: 'TestWithdrawalOutbox',
  sourcePath: join(here, '..', 'contracts', 'TestWithdrawalOutbox.sol'),
  artifactPath: join(here, '..', 'src', 'contracts', 'test-withdrawal-outbox.gen.ts'),
  exportPrefix: 'testWithdrawalOutbox',
}

/** CCTP V2's burn side on the local chains (docs/chains.md "The L2 route"). */
export const TEST_TOKEN_MESSENGER_V2: ContractSpec = {
  contract: 'TestTokenMessengerV2',
  sourcePath: join(here, '..', 'contracts', 'TestTokenMessengerV2.sol'),
  artifactPath: join(here, '..', 'src', 'contracts', 'test-token-messenger-v2.gen.ts'),
  exportPrefix: 'testTokenMessengerV2',
}

/** CCTP V2's message side on the local chains: what the attester signs and the mint is received through. */
export const TEST_MESSAGE_TRANSMITTER_V2: ContractSpec = {
  contract: 'TestMessageTransmitterV2',
  sourcePath: join(here, '..', 'contracts', 'TestMessageTransmitterV2.sol'),
  artifactPath: join(here, '..', 'src', 'contracts', 'test-message-transmitter-v2.gen.ts'),
  exportPrefix: 'testMessageTransmitterV2',
}

/** Safe v1.4.1's proxy and a singleton receiving as Safe does: the outbound policy's ETH-to-code budget. */
export const TEST_SAFE_PROXY: ContractSpec = {
  contract: 'TestSafeProxy',
  sourcePath: join(here, '..', 'contracts', 'TestSafeLikeWallet.sol'),
  artifactPath: join(here, '..', 'src', 'contracts', 'test-safe-proxy.gen.ts'),
  exportPrefix: 'testSafeProxy',
}

export const TEST_SAFE_SINGLETON: ContractSpec = {
  contract: 'TestSafeSingleton',
  sourcePath: join(here, '..', 'contracts', 'TestSafeLikeWallet.sol'),
  artifactPath: join(here, '..', 'src', 'contracts', 'test-safe-singleton.gen.ts'),
  exportPrefix: 'testSafeSingleton',
}

/** An ERC-1967 proxy and an ERC-4337-style account behind it: the outbound policy's ETH-to-code budget. */
export const TEST_ERC1967_PROXY: ContractSpec = {
  contract: 'TestErc1967Proxy',
  sourcePath: join(here, '..', 'contracts', 'TestErc4337LikeAccount.sol'),
  artifactPath: join(here, '..', 'src', 'contracts', 'test-erc1967-proxy.gen.ts'),
  exportPrefix: 'testErc1967Proxy',
}

export const TEST_ERC4337_ACCOUNT: ContractSpec = {
  contract: 'TestErc4337Account',
  sourcePath: join(here, '..', 'contracts', 'TestErc4337LikeAccount.sol'),
  artifactPath: join(here, '..', 'src', 'contracts', 'test-erc4337-account.gen.ts'),
  exportPrefix: 'testErc4337Account',
}

/** An ERC-20 that blocks, charges a fee to or answers false for the recipients its owner marks: the hostile-destination suite. */
export const TEST_HOSTILE_TOKEN: ContractSpec = {
  contract: 'TestHostileToken',
  sourcePath: join(here, '..', 'contracts', 'TestHostileToken.sol'),
  artifactPath: join(here, '..', 'src', 'contracts', 'test-hostile-token.gen.ts'),
  exportPrefix: 'testHostileToken',
}

export const CONTRACTS: readonly ContractSpec[] = [
  TEST_USDC,
  BALANCE_READER,
  TEST_SMART_WALLET,
  TEST_ERC1271_WALLET,
  TEST_ERC1271_WALLET_FACTORY,
  TEST_ONCHAIN_ACTION_MANAGER,
  TEST_WITHDRAWAL_OUTBOX,
  TEST_TOKEN_MESSENGER_V2,
  TEST_MESSAGE_TRANSMITTER_V2,
  TEST_SAFE_PROXY,
  TEST_SAFE_SINGLETON,
  TEST_ERC1967_PROXY,
  TEST_ERC4337_ACCOUNT,
  TEST_HOSTILE_TOKEN,
]

/** Kept for callers of the single-contract pipeline. */
export const CONTRACT_SOURCE_PATH = TEST_USDC.sourcePath
export const ARTIFACT_PATH = TEST_USDC.artifactPath

/** Pinned with the compiler version in package.json: the bytecode depends on both. */
const SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: 'cancun',
  metadata: { bytecodeHash: 'none' },
} as const

interface SolcOutput {
  errors?: { severity: 'error' | 'warning' | 'info'; formattedMessage: string }[]
  contracts?: Record<string, Record<string, { abi: unknown[]; evm: { bytecode: { object: string } } }>>
}

export interface CompiledContract {
  readonly spec: ContractSpec
  readonly compilerVersion: string
  readonly abi: unknown[]
  readonly bytecode: `0x${string}`
}

/** Compiles one contract of contracts/ (its file alone: the test contracts import nothing). */
export function compileContract(spec: ContractSpec): CompiledContract {
  // solc is CommonJS and loads a ~10 MB soljson; required lazily so importing this module is cheap
  const solc = createRequire(import.meta.url)('solc') as { version(): string; compile(input: string): string }
  const file = basename(spec.sourcePath)
  const input = {
    language: 'Solidity',
    sources: { [file]: { content: readFileSync(spec.sourcePath, 'utf8') } },
    settings: { ...SETTINGS, outputSelection: { '*': { [spec.contract]: ['abi', 'evm.bytecode.object'] } } },
  }
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error')
  if (errors.length > 0) throw new Error(`solc failed:\n${errors.map((e) => e.formattedMessage).join('\n')}`)
  const contract = output.contracts?.[file]?.[spec.contract]
  if (!contract) throw new Error(`solc produced no ${spec.contract}`)
  return { spec, compilerVersion: solc.version(), abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` }
}

export function compileTestUsdc(): CompiledContract {
  return compileContract(TEST_USDC)
}

export function compileBalanceReader(): CompiledContract {
  return compileContract(BALANCE_READER)
}

export function compileTestSmartWallet(): CompiledContract {
  return compileContract(TEST_SMART_WALLET)
}

export function compileTestErc1271Wallet(): CompiledContract {
  return compileContract(TEST_ERC1271_WALLET)
}

export function compileTestErc1271WalletFactory(): CompiledContract {
  return compileContract(TEST_ERC1271_WALLET_FACTORY)
}

export function compileTestOnchainActionManager(): CompiledContract {
  return compileContract(TEST_ONCHAIN_ACTION_MANAGER)
}

/**
 * The committed artifact's text: deterministic for a given source and compiler. The script
 * then runs the repo's formatter over it, so the freshness test compares values, not text.
 */
export function renderArtifact(c: CompiledContract): string {
  const p = c.spec.exportPrefix
  return `// Generated by packages/wallet/scripts/compile-contracts.ts from contracts/${basename(c.spec.sourcePath)}. Do not edit.
// solc ${c.compilerVersion}, optimizer 200 runs, evm ${SETTINGS.evmVersion}.
// Regenerate: pnpm --filter @wh/wallet compile:contracts (a test fails when this file is stale).

export const ${p}CompilerVersion = '${c.compilerVersion}'

export const ${p}Abi = ${JSON.stringify(c.abi, null, 2)} as const

export const ${p}Bytecode =
  '${c.bytecode}' as const
`
}

export function compileTestWithdrawalOutbox(): CompiledContract {
  return compileContract(TEST_WITHDRAWAL_OUTBOX)
}
