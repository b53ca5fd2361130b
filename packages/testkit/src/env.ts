import { API_ENV_NAMES, depositXpubOf } from '@wh/config'

/**
 * A complete, valid environment for tests: the well-known development keys of the
 * standard test mnemonic, nothing that holds real money.
 */
export const TEST_MNEMONIC = 'test test test test test test test test test test test junk'

/**
 * TEST_MNEMONIC's m/44'/60'/0' extended public key: the API's DEPOSIT_XPUB in tests, from which it
 * derives the addresses the worker's keyring signs for (`depositXpubOf(TEST_MNEMONIC)`; a test in
 * packages/wallet checks it).
 */
export const TEST_DEPOSIT_XPUB =
  'xpub6Ce9NcJvTk36xtLSrJLZqE7wtgA5deCeYs7rSQtreh4cj6ByPtrg9sD7V2FNFLPnf8heNP3FGkeV9qwfzvZNSd54JoNXVsXFYSYwHsnJxqP'

/** Hardhat/anvil default accounts 0..4 (from TEST_MNEMONIC); public knowledge, test-only. */
export const TEST_PRIVATE_KEYS = [
  '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
  '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d',
  '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a',
  '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6',
  '0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926e',
] as const

/**
 * Anvil's development accounts 5 and 6 (TEST_MNEMONIC): the exchange owner of every test and local
 * stack (EXCHANGE_WALLET_ADDRESS, whose key only the local setup and the tests hold, never a process of
 * the service) and the payout session key (EXCHANGE_PAYOUT_SESSION_KEY).
 */
export const TEST_OWNER_PRIVATE_KEY = '0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba' as const
export const TEST_PAYOUT_SESSION_KEY = '0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e' as const

/**
 * Where a test's services are until the test starts its own: a loopback port nothing listens on
 * (the discard port), so a test that forgets to start a chain or a simulator fails at once instead
 * of talking to a developer's running local stack (README: line 1 and line 2 run side by side).
 */
export const UNREACHABLE_HOST = '127.0.0.1:9'

/**
 * The settings every local stack shares (tests, benchmarks, the local run): one local EVM node
 * standing in for every chain, the local chain's funded development keys, loopback services.
 * Callers override what differs (secrets, ports, database).
 */
export function localStackEnv(overrides: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  // another mnemonic brings its own DEPOSIT_XPUB, unless the caller names one (a mismatch, on purpose)
  const mnemonic = overrides.MASTER_MNEMONIC
  const depositXpub =
    mnemonic === undefined || mnemonic === TEST_MNEMONIC || 'DEPOSIT_XPUB' in overrides
      ? TEST_DEPOSIT_XPUB // overrides.DEPOSIT_XPUB, when given, replaces it below
      : depositXpubOf(mnemonic)
  return {
    NODE_ENV: 'test',
    PORT: '0',
    TRADING_PROFILE: 'balanced',
    DATABASE_URL: `postgres://postgres@${UNREACHABLE_HOST}/postgres`,
    CACHE_URL: `redis://${UNREACHABLE_HOST}`,
    EXCHANGE_HTTP_URL: `http://${UNREACHABLE_HOST}`,
    EXCHANGE_WS_URL: `ws://${UNREACHABLE_HOST}/ws`,
    EXCHANGE_CHAIN_RPC_URL: `http://${UNREACHABLE_HOST}`,
    MASTER_PRIVATE_KEY: TEST_PRIVATE_KEYS[1],
    SESSION_PRIVATE_KEY: TEST_PRIVATE_KEYS[2],
    EXCHANGE_PAYOUT_SESSION_KEY: TEST_PAYOUT_SESSION_KEY,
    GAS_WALLET_PRIVATE_KEY: TEST_PRIVATE_KEYS[3],
    SWAP_WALLET_PRIVATE_KEY: TEST_PRIVATE_KEYS[4],
    // TEST_OWNER_PRIVATE_KEY's address
    EXCHANGE_WALLET_ADDRESS: '0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc',
    // Derive v3's funding subaccount and L1 deposit manager: placeholders no exchange knows; the exchange
    // tests' stack (apps/worker/test/fixtures/exchange-stack.ts) opens a real one and names it
    EXCHANGE_FUNDING_SUBACCOUNT_ID: '1',
    EXCHANGE_DEPOSIT_MANAGER_ADDRESS: '0x000000000000000000000000000000000000dEaD',
    PLATFORM_FEE_RATE: '0.1',
    RECONCILE_EPSILON: '0.01',
    WEB_ORIGIN: 'http://localhost:5173',
    MASTER_MNEMONIC: TEST_MNEMONIC,
    DEPOSIT_XPUB: depositXpub,
    JWT_SECRET: 'test-jwt-secret-that-is-at-least-32-characters-long',
    SIWE_DOMAIN: 'app.example.test',
    EXCHANGE_CHAIN_ID: '901',
    WEBHOOK_SECRET: 'test-webhook-secret-at-least-32-characters',
    WITHDRAWAL_MIN_USD: '10',
    WITHDRAWAL_MAX_USD: '100000',
    WITHDRAWAL_STUCK_MINUTES: '30',
    RPC_URL_ETHEREUM: `http://${UNREACHABLE_HOST}`,
    RPC_URL_OPTIMISM: `http://${UNREACHABLE_HOST}`,
    RPC_URL_BASE: `http://${UNREACHABLE_HOST}`,
    RPC_URL_ARBITRUM: `http://${UNREACHABLE_HOST}`,
    ...overrides,
  }
}

export function testEnv(overrides: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return localStackEnv({ LOG_LEVEL: 'silent', ...overrides })
}

/**
 * The API's part of `env` (API_ENV_NAMES: no key, no mnemonic), as the local run and compose give
 * the API process; with NODE_ENV=production the API refuses anything more (docs/architecture.md
 * "Least privilege").
 */
export function apiProcessEnv(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(API_ENV_NAMES.flatMap((n) => (env[n] === undefined ? [] : [[n, env[n] as string]])))
}
