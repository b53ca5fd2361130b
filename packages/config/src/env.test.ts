import { HDKey } from '@scure/bip32'
import { generateMnemonic, mnemonicToSeedSync } from '@scure/bip39'
import { wordlist } from '@scure/bip39/wordlists/english.js'
import { describe, expect, it } from 'vitest'
import {
  API_ENV_NAMES,
  API_FORBIDDEN_ENV_NAMES,
  ConfigError,
  ENV_SPEC,
  forbiddenApiEnv,
  loadApiConfig,
  loadConfig,
  loadMasterMnemonic,
  SECRET_ENV_NAMES,
} from './env'
import { depositXpubOf } from './xpub'

// A valid environment (test-only values; the keys are the public development keys).
const VALID: Record<string, string> = {
  NODE_ENV: 'test',
  PORT: '3000',
  TRADING_PROFILE: 'balanced',
  DATABASE_URL: 'postgres://u:pgpass-secret@127.0.0.1:5432/db',
  CACHE_URL: 'redis://127.0.0.1:6379',
  EXCHANGE_HTTP_URL: 'http://127.0.0.1:7000',
  EXCHANGE_WS_URL: 'ws://127.0.0.1:7000/ws',
  EXCHANGE_CHAIN_RPC_URL: 'http://127.0.0.1:8545',
  MASTER_PRIVATE_KEY: '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d',
  SESSION_PRIVATE_KEY: '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a',
  GAS_WALLET_PRIVATE_KEY: '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6',
  SWAP_WALLET_PRIVATE_KEY: '0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926e',
  EXCHANGE_WALLET_ADDRESS: '0x9965507d1a55bcc2695c58ba16fb37d819b0a4dc',
  PLATFORM_FEE_RATE: '0.1',
  RECONCILE_EPSILON: '0.01',
  WEB_ORIGIN: 'http://localhost:5173,https://app.example.test',
  MASTER_MNEMONIC: 'test test test test test test test test test test test junk',
  JWT_SECRET: 'a-jwt-secret-that-is-long-enough-0123456789',
  SIWE_DOMAIN: 'app.example.test',
  EXCHANGE_CHAIN_ID: '901',
  WEBHOOK_SECRET: 'a-webhook-secret-that-is-long-enough-012345',
  WITHDRAWAL_MIN_USD: '10',
  WITHDRAWAL_MAX_USD: '100000',
  WITHDRAWAL_STUCK_MINUTES: '30',
  RPC_URL_ETHEREUM: 'https://eth.example/key-in-url-secret',
  RPC_URL_OPTIMISM: 'http://127.0.0.1:8545',
  RPC_URL_BASE: 'http://127.0.0.1:8545',
  RPC_URL_ARBITRUM: 'http://127.0.0.1:8545',
  // Derive v3 (the only protocol): the worker needs its funding subaccount and L1 deposit manager
  EXCHANGE_FUNDING_SUBACCOUNT_ID: '10001',
  EXCHANGE_DEPOSIT_MANAGER_ADDRESS: '0x5fbdb2315678afecb367f032d93f642f64180aa3',
}

/** The API's part of `env` (what the local run gives the API process), with DEPOSIT_XPUB. */
function apiEnv(env: Record<string, string | undefined>): Record<string, string> {
  const picked = API_ENV_NAMES.filter((n) => env[n] !== undefined).map((n) => [n, env[n] as string])
  return { ...Object.fromEntries(picked), DEPOSIT_XPUB: depositXpubOf(env.MASTER_MNEMONIC as string) }
}

/** VALID without the funding subaccount and the deposit manager (what the local run's setup creates). */
const WITHOUT_V3 = Object.fromEntries(
  Object.entries(VALID).filter(
    ([k]) => k !== 'EXCHANGE_FUNDING_SUBACCOUNT_ID' && k !== 'EXCHANGE_DEPOSIT_MANAGER_ADDRESS',
  ),
)

/** The variables of spec 8.3 that have no default and are not optional. */
const REQUIRED = Object.entries(ENV_SPEC)
  .filter(([, s]) => !('default' in s) && !('optional' in s && s.optional))
  .map(([k]) => k)

function problemsOf(env: Record<string, string | undefined>): ConfigError {
  try {
    loadConfig(env)
  } catch (e) {
    if (e instanceof ConfigError) return e
    throw e
  }
  throw new Error('expected a ConfigError')
}

describe('loadConfig (spec 8.3)', () => {
  it('reads a valid environment, applies the defaults of the table and freezes the result', () => {
    const c = loadConfig(VALID)
    expect(c.port).toBe(3000)
    expect(c.preConvertLeadMinutes).toBe(10)
    expect(c.conversionFastTickSeconds).toBe(5)
    expect(c.conversionStuckMinutes).toBe(30)
    expect(c.wheelEnabled).toBe(false)
    expect(c.reconcileMode).toBe('observe')
    expect(c.alert).toBeUndefined()
    expect(c.exchange.walletAddress).toBe('0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc')
    expect(c.webOrigins).toEqual(['http://localhost:5173', 'https://app.example.test'])
    expect(Object.isFrozen(c)).toBe(true)
    expect(Object.isFrozen(c.keys)).toBe(true)
  })

  it('requires exactly the variables of spec 8.3 without a default; only ALERT_* are optional', () => {
    const spec83 =
      'NODE_ENV PORT TRADING_PROFILE DATABASE_URL CACHE_URL EXCHANGE_HTTP_URL EXCHANGE_WS_URL EXCHANGE_CHAIN_RPC_URL ' +
      'MASTER_PRIVATE_KEY SESSION_PRIVATE_KEY GAS_WALLET_PRIVATE_KEY EXCHANGE_WALLET_ADDRESS PLATFORM_FEE_RATE ' +
      'RECONCILE_EPSILON WEB_ORIGIN MASTER_MNEMONIC JWT_SECRET SIWE_DOMAIN EXCHANGE_CHAIN_ID WEBHOOK_SECRET ' +
      'WITHDRAWAL_MIN_USD WITHDRAWAL_MAX_USD WITHDRAWAL_STUCK_MINUTES RPC_URL_ETHEREUM RPC_URL_OPTIMISM RPC_URL_BASE ' +
      'RPC_URL_ARBITRUM SWAP_WALLET_PRIVATE_KEY PRE_CONVERT_LEAD_MINUTES CONVERSION_FAST_TICK_SECONDS ' +
      'CONVERSION_STUCK_MINUTES WHEEL_ENABLED RECONCILE_MODE ALERT_BOT_TOKEN ALERT_CHAT_ID'
    const all = spec83.split(' ')
    const withDefault = [
      'PRE_CONVERT_LEAD_MINUTES',
      'CONVERSION_FAST_TICK_SECONDS',
      'CONVERSION_STUCK_MINUTES',
      'WHEEL_ENABLED',
      'RECONCILE_MODE',
    ]
    const optional = ['ALERT_BOT_TOKEN', 'ALERT_CHAT_ID']
    for (const name of all) expect(ENV_SPEC).toHaveProperty(name)
    expect(REQUIRED.sort()).toEqual(all.filter((n) => !withDefault.includes(n) && !optional.includes(n)).sort())
    expect(loadConfig({ ...VALID, ALERT_BOT_TOKEN: 't', ALERT_CHAT_ID: '1' }).alert).toEqual({
      botToken: 't',
      chatId: '1',
    })
  })

  for (const name of REQUIRED) {
    it(`fails naming ${name} when it is missing`, () => {
      const env = { ...VALID }
      delete env[name]
      const err = problemsOf(env)
      expect(err.problems.map((p) => p.name)).toEqual([name])
      expect(err.message).toContain(`${name}: is required but missing`)
    })
  }

  it('names every bad variable in one message', () => {
    const err = problemsOf({ ...VALID, PORT: 'abc', JWT_SECRET: 'short', SIWE_DOMAIN: undefined })
    expect(err.problems.map((p) => p.name).sort()).toEqual(['JWT_SECRET', 'PORT', 'SIWE_DOMAIN'])
  })

  const invalid: Record<string, string> = {
    JWT_SECRET: 'x'.repeat(31),
    MASTER_MNEMONIC: 'test test test test test test test test test test test test',
    MASTER_PRIVATE_KEY: '0x1234',
    SESSION_PRIVATE_KEY: `0x${'0'.repeat(64)}`,
    GAS_WALLET_PRIVATE_KEY: `0x${'f'.repeat(64)}`,
    EXCHANGE_WALLET_ADDRESS: '0x123',
    DATABASE_URL: 'mysql://x',
    CACHE_URL: 'not a url',
    EXCHANGE_WS_URL: 'http://127.0.0.1:7000',
    PORT: '70000',
    EXCHANGE_CHAIN_ID: '0',
    PLATFORM_FEE_RATE: '1.5',
    RECONCILE_EPSILON: '-1',
    RECONCILE_MODE: 'yolo',
    WHEEL_ENABLED: 'yes',
    NODE_ENV: 'staging',
    WITHDRAWAL_STUCK_MINUTES: '1.5',
    WEB_ORIGIN: 'localhost',
    SIWE_DOMAIN: 'https://app.example.test/',
  }
  for (const [name, value] of Object.entries(invalid)) {
    it(`refuses an invalid ${name}`, () => {
      expect(problemsOf({ ...VALID, [name]: value }).problems.map((p) => p.name)).toEqual([name])
    })
  }

  it('refuses WITHDRAWAL_MIN_USD above WITHDRAWAL_MAX_USD', () => {
    const err = problemsOf({ ...VALID, WITHDRAWAL_MIN_USD: '100.5', WITHDRAWAL_MAX_USD: '100.25' })
    expect(err.problems[0]?.name).toBe('WITHDRAWAL_MIN_USD')
  })

  it('never prints a secret value, even an invalid one', () => {
    const bad: Record<string, string> = {
      ...VALID,
      JWT_SECRET: 'short-secret-value',
      MASTER_PRIVATE_KEY: '0xdeadbeef',
      RPC_URL_BASE: 'nope',
    }
    const err = problemsOf(bad)
    for (const name of SECRET_ENV_NAMES) {
      const value = bad[name]
      if (value && value.length > 3) expect(err.message).not.toContain(value)
    }
    expect(err.message).not.toContain('deadbeef')
    expect(err.message).not.toContain('short-secret-value')
  })
})

describe('RECONCILE_EPSILON (docs/exchange.md "Accruals and reconciliation")', () => {
  it('takes a non-negative decimal amount in the currency units, zero included, kept as written', () => {
    for (const v of ['0', '0.01', '5', '0.000001', `0.${'0'.repeat(17)}1`])
      expect(loadConfig({ ...VALID, RECONCILE_EPSILON: v }).reconcileEpsilon).toBe(v)
  })
  it('refuses a negative, exponent, bare-point or finer-than-18-decimals value with one clear reason', () => {
    for (const v of ['-0.01', '1e-3', '.5', '1.', '0,01', `0.${'0'.repeat(18)}1`, 'abc']) {
      const err = problemsOf({ ...VALID, RECONCILE_EPSILON: v })
      expect(err.problems).toEqual([
        {
          name: 'RECONCILE_EPSILON',
          reason:
            "must be a non-negative decimal amount in the currency's own units (e.g. 0.01), with at most 18 decimals",
        },
      ])
    }
  })
})

describe('the local nodes: USDC_ADDRESS_LOCAL_* and CHAIN_ID_LOCAL_* (local run and tests)', () => {
  const LOCAL = {
    USDC_ADDRESS_LOCAL_ETHEREUM: '0x5fbdb2315678afecb367f032d93f642f64180aa3',
    USDC_ADDRESS_LOCAL_OPTIMISM: '0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512',
    USDC_ADDRESS_LOCAL_BASE: '0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0',
    USDC_ADDRESS_LOCAL_ARBITRUM: '0xCf7Ed3AccA5a467e9e704C703E8D87F634fB0Fc9',
    CHAIN_ID_LOCAL_OPTIMISM: '902',
    CHAIN_ID_LOCAL_BASE: '903',
    CHAIN_ID_LOCAL_ARBITRUM: '904',
  }
  it('are optional; when set, each chain has its own id (Ethereum the exchange L1) and TestUSDC, in EIP-55', () => {
    expect(loadConfig(VALID).localChains).toBeUndefined()
    const c = loadConfig({ ...VALID, ...LOCAL })
    expect(c.localChains).toEqual({
      ethereum: { chainId: 901, usdc: '0x5FbDB2315678afecb367f032d93F642f64180aa3' },
      optimism: { chainId: 902, usdc: '0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512' },
      base: { chainId: 903, usdc: '0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0' },
      arbitrum: { chainId: 904, usdc: '0xCf7Ed3AccA5a467e9e704C703E8D87F634fB0Fc9' },
    })
    expect(loadApiConfig({ ...apiEnv(VALID), ...LOCAL }).localChains).toEqual(c.localChains)
  })
  it('are refused in production, in part, with two chains on one id, or when not an address', () => {
    expect(() => loadConfig({ ...VALID, ...LOCAL, NODE_ENV: 'production' })).toThrow(
      /USDC_ADDRESS_LOCAL_BASE: must not be set when NODE_ENV=production/,
    )
    const { USDC_ADDRESS_LOCAL_BASE: _, ...part } = LOCAL
    expect(() => loadConfig({ ...VALID, ...part })).toThrow(/USDC_ADDRESS_LOCAL_BASE: must be set together with/)
    // the local Base on the exchange's L1 id: one network under two names
    expect(() => loadConfig({ ...VALID, ...LOCAL, CHAIN_ID_LOCAL_BASE: '901' })).toThrow(/must differ from each other/)
    expect(() => loadConfig({ ...VALID, ...LOCAL, CHAIN_ID_LOCAL_ARBITRUM: '902' })).toThrow(/one node per chain/)
    expect(() => loadConfig({ ...VALID, ...LOCAL, USDC_ADDRESS_LOCAL_OPTIMISM: 'nope' })).toThrow(
      /USDC_ADDRESS_LOCAL_OPTIMISM/,
    )
  })
  it('USDC_ADDRESS_LOCAL (one node for every chain) is retired, naming why', () => {
    expect(() => loadConfig({ ...VALID, USDC_ADDRESS_LOCAL: LOCAL.USDC_ADDRESS_LOCAL_ETHEREUM })).toThrow(
      /USDC_ADDRESS_LOCAL: one local node no longer stands in for every chain/,
    )
  })
})

describe('the L2 route: CCTP_*, L2_TARGETS, HOT_WALLET_ETH_ALERT', () => {
  it("defaults to Circle's attestation service, no stand-ins, and every L2 at BRIDGE_RETAIN_USDC:10:5:50000", () => {
    const c = loadConfig({ ...VALID, BRIDGE_RETAIN_USDC: '250' })
    expect(c.cctp).toEqual({ attestationUrl: 'https://iris-api.circle.com', local: undefined })
    for (const chain of ['optimism', 'base', 'arbitrum'] as const)
      expect(c.l2Targets[chain]).toEqual({
        target: 250_000_000n,
        minTransfer: 10_000_000n,
        maxFee: 5_000_000n,
        maxPerRun: 50_000_000_000n,
      })
    expect(c.hotWalletEthAlertWei).toBe(50_000_000_000_000_000n)
  })
  it('reads each named L2 exactly, in base units; the others keep the defaults', () => {
    const c = loadConfig({
      ...VALID,
      L2_TARGETS: 'base:100.5:1:0.25:2000, arbitrum:0:0:0:10',
      HOT_WALLET_ETH_ALERT: '1.5',
    })
    expect(c.l2Targets.base).toEqual({
      target: 100_500_000n,
      minTransfer: 1_000_000n,
      maxFee: 250_000n,
      maxPerRun: 2_000_000_000n,
    })
    expect(c.l2Targets.arbitrum).toEqual({ target: 0n, minTransfer: 0n, maxFee: 0n, maxPerRun: 10_000_000n })
    expect(c.l2Targets.optimism.target).toBe(1_000_000_000n)
    expect(c.hotWalletEthAlertWei).toBe(1_500_000_000_000_000_000n)
  })
  it('refuses a bad entry naming why, and the stand-ins in production or alone', () => {
    expect(() => loadConfig({ ...VALID, L2_TARGETS: 'ethereum:1:1:1:1' })).toThrow(/L2_TARGETS: names ethereum/)
    expect(() => loadConfig({ ...VALID, L2_TARGETS: 'base:1:1:1' })).toThrow(/base: needs target:minTransfer/)
    expect(() => loadConfig({ ...VALID, L2_TARGETS: 'base:1:1:1:1,base:2:2:2:2' })).toThrow(/base is named twice/)
    expect(() => loadConfig({ ...VALID, L2_TARGETS: 'base:1:1:1:0' })).toThrow(/maxPerRun must be above 0/)
    const local = {
      CCTP_TOKEN_MESSENGER_LOCAL: '0x5fbdb2315678afecb367f032d93f642f64180aa3',
      CCTP_MESSAGE_TRANSMITTER_LOCAL: '0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512',
    }
    expect(loadConfig({ ...VALID, ...local }).cctp.local).toEqual({
      tokenMessenger: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
      messageTransmitter: '0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512',
    })
    expect(() => loadConfig({ ...VALID, ...local, NODE_ENV: 'production' })).toThrow(
      /CCTP_TOKEN_MESSENGER_LOCAL: must not be set when NODE_ENV=production/,
    )
    expect(() => loadConfig({ ...VALID, CCTP_TOKEN_MESSENGER_LOCAL: local.CCTP_TOKEN_MESSENGER_LOCAL })).toThrow(
      /must be set together with CCTP_MESSAGE_TRANSMITTER_LOCAL/,
    )
  })
})

describe('BRIDGE_RETAIN_USDC (the bridge tick)', () => {
  it('defaults to 1000 USDC and is read exactly in base units', () => {
    expect(loadConfig(VALID).bridgeRetainUsdcBaseUnits).toBe(1_000_000_000n)
    expect(loadConfig({ ...VALID, BRIDGE_RETAIN_USDC: '12.000001' }).bridgeRetainUsdcBaseUnits).toBe(12_000_001n)
    expect(loadConfig({ ...VALID, BRIDGE_RETAIN_USDC: '0' }).bridgeRetainUsdcBaseUnits).toBe(0n)
  })
  it('refuses more decimals than USDC has, and non-numbers', () => {
    expect(() => loadConfig({ ...VALID, BRIDGE_RETAIN_USDC: '1.0000001' })).toThrow(/BRIDGE_RETAIN_USDC/)
    expect(() => loadConfig({ ...VALID, BRIDGE_RETAIN_USDC: '-5' })).toThrow(/BRIDGE_RETAIN_USDC/)
  })
})

describe('session keys: a key per duty, and the owner key in no process', () => {
  // anvil account 5: the owner's key, which only the local setup and the tests hold
  const OWNER_KEY = '0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba'
  const PAYOUT = '0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e'
  it('reads the trading key, its successor, the payout key and its successor, and the alert lead', () => {
    const c = loadConfig({ ...VALID, EXCHANGE_PAYOUT_SESSION_KEY: PAYOUT, EXCHANGE_SESSION_KEY_ALERT_DAYS: '7' })
    expect(c.keys.payoutSessionKey).toBe(PAYOUT)
    expect(c.keys.sessionPrivateKeyNext).toBeUndefined()
    expect(c.exchange.sessionKeyAlertDays).toBe(7)
    expect(loadConfig(VALID).exchange.sessionKeyAlertDays).toBe(14)
  })
  it("refuses any key that is the owner's (EXCHANGE_WALLET_ADDRESS), naming the variable, never the key", () => {
    for (const name of ['SESSION_PRIVATE_KEY', 'EXCHANGE_PAYOUT_SESSION_KEY', 'MASTER_PRIVATE_KEY']) {
      const err = problemsOf({ ...VALID, [name]: OWNER_KEY })
      expect(err.problems).toContainEqual({ name, reason: expect.stringMatching(/owner key must reach no process/) })
      expect(err.message).not.toContain(OWNER_KEY.slice(2))
    }
  })
  it('refuses one key in two settings', () => {
    const err = problemsOf({ ...VALID, EXCHANGE_PAYOUT_SESSION_KEY: VALID.SESSION_PRIVATE_KEY })
    expect(err.problems).toContainEqual({
      name: 'EXCHANGE_PAYOUT_SESSION_KEY',
      reason: 'is the same key as SESSION_PRIVATE_KEY: each key has one duty',
    })
  })
  it('the API holds none of them', () => {
    for (const n of ['SESSION_PRIVATE_KEY_NEXT', 'EXCHANGE_PAYOUT_SESSION_KEY', 'EXCHANGE_PAYOUT_SESSION_KEY_NEXT'])
      expect(API_FORBIDDEN_ENV_NAMES as readonly string[]).toContain(n)
  })
})

describe('the treasury tick (TREASURY_*, EXCHANGE_WITHDRAWAL_OUTBOX_ADDRESS)', () => {
  it('defaults: refill under 500 USDC, at most 50,000 a withdrawal, a 1 USD fee cap, no outbox', () => {
    const c = loadConfig(VALID)
    expect(c.treasury).toEqual({
      floorUsdcBaseUnits: 500_000_000n,
      maxWithdrawUsdcBaseUnits: 50_000_000_000n,
      withdrawMaxFeeUsd: '1',
    })
    expect(c.exchange.withdrawalOutbox).toBeUndefined()
  })
  it('reads amounts exactly in base units and the outbox checksummed; refuses finer than USDC and non-addresses', () => {
    const outbox = '0x5FbDB2315678afecb367f032d93F642f64180aa3'
    const c = loadConfig({
      ...VALID,
      TREASURY_FLOOR_USDC: '0.000001',
      TREASURY_MAX_WITHDRAW_USDC: '12.5',
      EXCHANGE_WITHDRAWAL_OUTBOX_ADDRESS: outbox.toLowerCase(),
    })
    expect(c.treasury.floorUsdcBaseUnits).toBe(1n)
    expect(c.treasury.maxWithdrawUsdcBaseUnits).toBe(12_500_000n)
    expect(c.exchange.withdrawalOutbox).toBe(outbox)
    expect(() => loadConfig({ ...VALID, TREASURY_FLOOR_USDC: '1.0000001' })).toThrow(/TREASURY_FLOOR_USDC/)
    expect(() => loadConfig({ ...VALID, TREASURY_MAX_WITHDRAW_USDC: 'x' })).toThrow(/TREASURY_MAX_WITHDRAW_USDC/)
    expect(() => loadConfig({ ...VALID, EXCHANGE_WITHDRAWAL_OUTBOX_ADDRESS: '0x12' })).toThrow(
      /EXCHANGE_WITHDRAWAL_OUTBOX_ADDRESS/,
    )
  })
})

describe('WORKER_CLOCK (the local run and tests)', () => {
  it('is the system clock by default; exchange follows the exchange time (scripts/dev.sh --demo)', () => {
    expect(loadConfig(VALID).workerClock).toBe('system')
    expect(loadConfig({ ...VALID, WORKER_CLOCK: 'exchange' }).workerClock).toBe('exchange')
    expect(() => loadConfig({ ...VALID, WORKER_CLOCK: 'simulator' })).toThrow(/WORKER_CLOCK/)
  })
  it('refuses to follow the exchange in production', () => {
    expect(() => loadConfig({ ...VALID, NODE_ENV: 'production', WORKER_CLOCK: 'exchange' })).toThrow(
      /WORKER_CLOCK: must not be exchange when NODE_ENV=production/,
    )
    expect(loadConfig({ ...VALID, NODE_ENV: 'production', WORKER_CLOCK: 'system' }).workerClock).toBe('system')
  })
})

describe('Derive v3, the only protocol (docs/exchange-v3.md)', () => {
  it('reads the funding subaccount and the L1 deposit manager; the API reads neither', () => {
    const manager = '0x5FbDB2315678afecb367f032d93F642f64180aa3'
    expect(loadConfig(VALID).exchange).toMatchObject({ fundingSubaccountId: 10_001, depositManager: manager })
    expect(loadConfig(VALID).exchange).not.toHaveProperty('protocol')
    expect(loadApiConfig(apiEnv(VALID)).exchange).toEqual({ httpUrl: VALID.EXCHANGE_HTTP_URL, chainId: 901 })
    expect(loadApiConfig(apiEnv(WITHOUT_V3)).exchange.httpUrl).toBe(VALID.EXCHANGE_HTTP_URL)
  })

  it('EXCHANGE_PROTOCOL is retired: v3 (or empty) is accepted and ignored, anything else refused naming why', () => {
    for (const ok of ['v3', ''])
      expect(loadConfig({ ...VALID, EXCHANGE_PROTOCOL: ok }).exchange).toEqual(loadConfig(VALID).exchange)
    expect(loadApiConfig({ ...apiEnv(VALID), EXCHANGE_PROTOCOL: 'v3' }).exchange).toEqual(
      loadApiConfig(apiEnv(VALID)).exchange,
    )
    for (const bad of ['v2', 'V3', 'v4']) {
      const err = problemsOf({ ...VALID, EXCHANGE_PROTOCOL: bad })
      expect(err.problems).toEqual([
        { name: 'EXCHANGE_PROTOCOL', reason: expect.stringMatching(/Derive retired its v2 protocol.*v3 only/) },
      ])
      // the API refuses it too, though it reads nothing else of the exchange's movements
      expect(() => loadApiConfig({ ...apiEnv(VALID), EXCHANGE_PROTOCOL: bad })).toThrow(
        /EXCHANGE_PROTOCOL: Derive retired its v2 protocol/,
      )
    }
    expect(API_ENV_NAMES as readonly string[]).not.toContain('EXCHANGE_PROTOCOL')
    expect(ENV_SPEC).not.toHaveProperty('EXCHANGE_PROTOCOL')
  })

  it("the local run's setup reads the configuration before it opens the funding subaccount and deploys the manager", () => {
    expect(() => loadConfig(WITHOUT_V3)).toThrow(/EXCHANGE_FUNDING_SUBACCOUNT_ID/)
    expect(loadConfig(WITHOUT_V3, { setup: true }).exchange).toMatchObject({
      fundingSubaccountId: undefined,
      depositManager: undefined,
    })
  })

  it('the worker needs the funding subaccount and the L1 deposit manager, unconditionally', () => {
    const manager = { EXCHANGE_DEPOSIT_MANAGER_ADDRESS: '0x5FbDB2315678afecb367f032d93F642f64180aa3' }
    expect(problemsOf({ ...WITHOUT_V3, ...manager }).problems).toEqual([
      { name: 'EXCHANGE_FUNDING_SUBACCOUNT_ID', reason: 'is required but missing' },
    ])
    expect(problemsOf({ ...WITHOUT_V3, EXCHANGE_FUNDING_SUBACCOUNT_ID: '7' }).problems).toEqual([
      { name: 'EXCHANGE_DEPOSIT_MANAGER_ADDRESS', reason: 'is required but missing' },
    ])
    for (const bad of ['0', '-1', '1.5', 'abc'])
      expect(() => loadConfig({ ...VALID, ...manager, EXCHANGE_FUNDING_SUBACCOUNT_ID: bad })).toThrow(
        /EXCHANGE_FUNDING_SUBACCOUNT_ID/,
      )
    expect(() =>
      loadConfig({ ...VALID, EXCHANGE_FUNDING_SUBACCOUNT_ID: '7', EXCHANGE_DEPOSIT_MANAGER_ADDRESS: '0x12' }),
    ).toThrow(/EXCHANGE_DEPOSIT_MANAGER_ADDRESS/)
  })

  it('the withdrawal outbox stays optional: without it the treasury tick only says so', () => {
    expect(loadConfig(VALID).exchange.withdrawalOutbox).toBeUndefined()
    const outbox = '0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512'
    expect(
      loadConfig({ ...VALID, EXCHANGE_WITHDRAWAL_OUTBOX_ADDRESS: outbox.toLowerCase() }).exchange.withdrawalOutbox,
    ).toBe(outbox)
  })
})

describe('EXCHANGE_SUBACCOUNT_CREATION_FEE_CAP_USD (docs/exchange-v3.md "Movements on v3")', () => {
  it("is 1 USD by default (derive-ts's standard creation fee); a decimal of at most 6 places; 0 allowed", () => {
    expect(loadConfig(VALID).exchange.subaccountCreationFeeCapUsd).toBe('1')
    expect(
      loadConfig({ ...VALID, EXCHANGE_SUBACCOUNT_CREATION_FEE_CAP_USD: '2.5' }).exchange.subaccountCreationFeeCapUsd,
    ).toBe('2.5')
    expect(
      loadConfig({ ...VALID, EXCHANGE_SUBACCOUNT_CREATION_FEE_CAP_USD: '0' }).exchange.subaccountCreationFeeCapUsd,
    ).toBe('0')
    for (const bad of ['-1', 'one', '1.0000001'])
      expect(() => loadConfig({ ...VALID, EXCHANGE_SUBACCOUNT_CREATION_FEE_CAP_USD: bad })).toThrow(
        /EXCHANGE_SUBACCOUNT_CREATION_FEE_CAP_USD/,
      )
  })
})

describe('WORKER_CONCURRENCY and the local swap venue', () => {
  it('reads queue=n pairs; refuses anything else', () => {
    expect(loadConfig(VALID).workerConcurrency).toEqual({})
    expect(loadConfig({ ...VALID, WORKER_CONCURRENCY: 'deposits=8, trading=2' }).workerConcurrency).toEqual({
      deposits: 8,
      trading: 2,
    })
    for (const bad of ['deposits', 'deposits=0', 'deposits=-1', 'deposits=1.5', 'Deposits=2', 'a=1;b=2'])
      expect(() => loadConfig({ ...VALID, WORKER_CONCURRENCY: bad }), bad).toThrow(/WORKER_CONCURRENCY/)
  })
  it('takes the pool and TestWETH together, never in production; SWAP_CHAIN defaults to base', () => {
    const pool = '0xCf7Ed3AccA5a467e9e704C703E8D87F634fB0Fc9'
    const weth = '0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0'
    expect(loadConfig(VALID).swapLocal).toBeUndefined()
    expect(loadConfig(VALID).swapChain).toBe('base')
    expect(
      loadConfig({ ...VALID, SWAP_POOL_ADDRESS_LOCAL: pool.toLowerCase(), WETH_ADDRESS_LOCAL: weth }).swapLocal,
    ).toEqual({ pool, weth })
    expect(() => loadConfig({ ...VALID, SWAP_POOL_ADDRESS_LOCAL: pool })).toThrow(/together with WETH_ADDRESS_LOCAL/)
    expect(() =>
      loadConfig({ ...VALID, NODE_ENV: 'production', SWAP_POOL_ADDRESS_LOCAL: pool, WETH_ADDRESS_LOCAL: weth }),
    ).toThrow(/SWAP_POOL_ADDRESS_LOCAL: must not be set when NODE_ENV=production/)
    expect(() => loadConfig({ ...VALID, SWAP_CHAIN: 'solana' })).toThrow(/SWAP_CHAIN/)
  })
})

describe("the API's configuration (loadApiConfig: no key, no mnemonic)", () => {
  const XPUB = depositXpubOf(VALID.MASTER_MNEMONIC as string)
  /** The API's part of VALID, with DEPOSIT_XPUB: what the local run gives the API process. */
  const API_ENV: Record<string, string> = {
    ...Object.fromEntries(API_ENV_NAMES.filter((n) => VALID[n] !== undefined).map((n) => [n, VALID[n] as string])),
    DEPOSIT_XPUB: XPUB,
  }
  const apiProblems = (env: Record<string, string | undefined>): ConfigError => {
    try {
      loadApiConfig(env)
    } catch (e) {
      if (e instanceof ConfigError) return e
      throw e
    }
    throw new Error('expected a ConfigError')
  }
  const account = HDKey.fromMasterSeed(mnemonicToSeedSync(VALID.MASTER_MNEMONIC as string)).derive("m/44'/60'/0'")

  it('serves the operator desk on its own listener, loopback by default, never on PORT', () => {
    expect(loadApiConfig(API_ENV).adminListener).toBeUndefined()
    const withDesk = loadApiConfig({ ...API_ENV, ADMIN_PORT: '4100' })
    expect(withDesk.adminListener).toEqual({ host: '127.0.0.1', port: 4100 })
    const port = API_ENV.PORT === '0' ? '4101' : (API_ENV.PORT as string)
    expect(apiProblems({ ...API_ENV, PORT: port, ADMIN_PORT: port }).problems).toEqual([
      { name: 'ADMIN_PORT', reason: 'must not be the public PORT' },
    ])
  })

  it('operators: passwords by default, a proxy only with its secret; approvals 2 in production, 1 elsewhere, unless set', () => {
    expect(loadApiConfig(API_ENV).operators).toEqual({ auth: { kind: 'password' }, approvalsRequired: 1 })
    expect(loadApiConfig({ ...API_ENV, NODE_ENV: 'production' }).operators.approvalsRequired).toBe(2)
    expect(loadApiConfig({ ...API_ENV, NODE_ENV: 'production', ADMIN_APPROVALS_REQUIRED: '3' }).operators).toEqual({
      auth: { kind: 'password' },
      approvalsRequired: 3,
    })
    expect(apiProblems({ ...API_ENV, ADMIN_APPROVALS_REQUIRED: '0' }).problems).toEqual([
      { name: 'ADMIN_APPROVALS_REQUIRED', reason: 'must be 1 to 5' },
    ])
    expect(apiProblems({ ...API_ENV, ADMIN_AUTH: 'proxy' }).problems).toEqual([
      { name: 'ADMIN_PROXY_SECRET', reason: expect.stringMatching(/required with ADMIN_AUTH=proxy/) },
    ])
    const secret = 'p'.repeat(32)
    expect(loadApiConfig({ ...API_ENV, ADMIN_AUTH: 'proxy', ADMIN_PROXY_SECRET: secret }).operators.auth).toEqual({
      kind: 'proxy',
      userHeader: 'x-forwarded-user',
      secret,
    })
    expect(SECRET_ENV_NAMES).toEqual(expect.arrayContaining(['ADMIN_PROXY_SECRET', 'METRICS_TOKEN']))
  })

  it('ADMIN_PASSWORD is retired: any value is refused, naming what replaced it', () => {
    expect(apiProblems({ ...API_ENV, ADMIN_PASSWORD: 'a-password-of-16-chars' }).problems).toEqual([
      { name: 'ADMIN_PASSWORD', reason: expect.stringMatching(/operators sign in with names.*METRICS_TOKEN/) },
    ])
    expect(ENV_SPEC).not.toHaveProperty('ADMIN_PASSWORD')
  })

  it('Bull Board is mounted only when enabled, read-only unless said otherwise; /metrics takes METRICS_TOKEN', () => {
    expect(loadApiConfig(API_ENV).bullBoard).toBeUndefined()
    expect(loadApiConfig({ ...API_ENV, BULL_BOARD_ENABLED: 'true' }).bullBoard).toEqual({ readOnly: true })
    expect(loadApiConfig({ ...API_ENV, BULL_BOARD_ENABLED: 'true', BULL_BOARD_READ_ONLY: 'false' }).bullBoard).toEqual({
      readOnly: false,
    })
    expect(loadApiConfig({ ...API_ENV, METRICS_TOKEN: 'm'.repeat(32) }).metricsToken).toBe('m'.repeat(32))
    expect(apiProblems({ ...API_ENV, METRICS_TOKEN: 'short' }).problems).toEqual([
      { name: 'METRICS_TOKEN', reason: 'must be at least 32 characters' },
    ])
  })

  it('serves the built console only when CONSOLE_DIR is set, as an absolute path', () => {
    expect(loadApiConfig(API_ENV).consoleDir).toBeUndefined()
    expect(loadApiConfig({ ...API_ENV, CONSOLE_DIR: '' }).consoleDir).toBeUndefined()
    expect(loadApiConfig({ ...API_ENV, CONSOLE_DIR: '/srv/console' }).consoleDir).toBe('/srv/console')
    expect(loadApiConfig({ ...API_ENV, CONSOLE_DIR: 'apps/web/dist' }).consoleDir).toBe(
      `${process.cwd()}/apps/web/dist`,
    )
  })

  it('reads no private key, no mnemonic and nothing only the worker uses', () => {
    for (const name of [...API_FORBIDDEN_ENV_NAMES, 'EXCHANGE_WS_URL', 'EXCHANGE_CHAIN_RPC_URL', 'RECONCILE_MODE'])
      expect(API_ENV_NAMES as readonly string[]).not.toContain(name)
    for (const name of API_FORBIDDEN_ENV_NAMES) expect(API_ENV).not.toHaveProperty(name)
    const api = loadApiConfig(API_ENV)
    expect(api.depositXpub).toBe(XPUB)
    expect(api).not.toHaveProperty('keys')
    expect(JSON.stringify(api)).not.toContain('test test')
    expect(Object.isFrozen(api)).toBe(true)
  })

  it("is the worker's configuration restricted to the API's fields: the worker's Config satisfies ApiConfig", () => {
    const api = loadApiConfig(API_ENV)
    const full = loadConfig(VALID)
    expect(full.depositXpub).toBe(XPUB) // DEPOSIT_XPUB unset: the mnemonic's own
    const apiView = Object.fromEntries(Object.keys(api).map((k) => [k, full[k as keyof typeof full]]))
    const { httpUrl, chainId } = full.exchange
    expect({ ...apiView, exchange: { httpUrl, chainId } }).toEqual(api)
  })

  it("requires DEPOSIT_XPUB, and the account key m/44'/60'/0' as a public key only", () => {
    const { DEPOSIT_XPUB: _, ...without } = API_ENV
    expect(apiProblems(without).problems).toEqual([{ name: 'DEPOSIT_XPUB', reason: 'is required but missing' }])
    const deeper = account.deriveChild(0).publicExtendedKey
    expect(apiProblems({ ...API_ENV, DEPOSIT_XPUB: deeper }).problems[0]?.reason).toMatch(/depth 3/)
    expect(apiProblems({ ...API_ENV, DEPOSIT_XPUB: 'xpub-not-a-key' }).problems[0]?.reason).toMatch(/xpub/)
  })

  it('refuses an extended private key without echoing it', () => {
    const xprv = account.privateExtendedKey
    const err = apiProblems({ ...API_ENV, DEPOSIT_XPUB: xprv })
    expect(err.problems).toEqual([{ name: 'DEPOSIT_XPUB', reason: expect.stringMatching(/extended private key/) }])
    expect(err.message).not.toContain(xprv)
    expect(err.message).not.toContain(xprv.slice(4, 24))
    // a corrupted one too (its checksum fails): still named private, never printed
    const broken = `${xprv.slice(0, -1)}${xprv.endsWith('A') ? 'B' : 'A'}`
    expect(apiProblems({ ...API_ENV, DEPOSIT_XPUB: broken }).message).toMatch(
      /DEPOSIT_XPUB: is an extended private key/,
    )
  })

  it('refuses a private key, the mnemonic or the owner URL in its environment in production, naming them only', () => {
    const prod = { ...API_ENV, NODE_ENV: 'production' }
    expect(loadApiConfig(prod).nodeEnv).toBe('production')
    const leaked = {
      ...prod,
      MASTER_PRIVATE_KEY: VALID.MASTER_PRIVATE_KEY,
      MASTER_MNEMONIC: VALID.MASTER_MNEMONIC,
      DATABASE_OWNER_URL: 'postgres://owner:owner-secret@127.0.0.1/db',
      GAS_WALLET_PRIVATE_KEY: '', // empty is unset (compose blanks what the API must not hold)
    }
    const err = apiProblems(leaked)
    expect(err.problems.map((p) => p.name).sort()).toEqual([
      'DATABASE_OWNER_URL',
      'MASTER_MNEMONIC',
      'MASTER_PRIVATE_KEY',
    ])
    for (const value of [VALID.MASTER_PRIVATE_KEY, 'test test', 'owner-secret'])
      expect(err.message).not.toContain(value)
    // elsewhere they are ignored (main.ts names them in a warning)
    expect(loadApiConfig({ ...leaked, NODE_ENV: 'development' }).depositXpub).toBe(XPUB)
    expect(forbiddenApiEnv(leaked).sort()).toEqual(['DATABASE_OWNER_URL', 'MASTER_MNEMONIC', 'MASTER_PRIVATE_KEY'])
  })
})

describe("DEPOSIT_XPUB in the worker (its mnemonic's, or refused)", () => {
  it("is optional, and taken when it is the mnemonic's", () => {
    const xpub = depositXpubOf(VALID.MASTER_MNEMONIC as string)
    expect(loadConfig({ ...VALID, DEPOSIT_XPUB: xpub }).depositXpub).toBe(xpub)
  })
  it("refuses another mnemonic's xpub, naming DEPOSIT_XPUB only", () => {
    const other = depositXpubOf(generateMnemonic(wordlist))
    const err = problemsOf({ ...VALID, DEPOSIT_XPUB: other })
    expect(err.problems).toEqual([{ name: 'DEPOSIT_XPUB', reason: expect.stringMatching(/cannot sweep/) }])
    expect(err.message).not.toContain(other)
    expect(err.message).not.toContain('test test')
  })
  it('loadMasterMnemonic reads the mnemonic alone (the deposit-xpub CLI)', () => {
    expect(loadMasterMnemonic({ MASTER_MNEMONIC: `  ${VALID.MASTER_MNEMONIC}  ` })).toBe(VALID.MASTER_MNEMONIC)
    expect(() => loadMasterMnemonic({})).toThrow(/MASTER_MNEMONIC: is required/)
  })
})

describe('TRUST_PROXY (the API behind a reverse proxy)', () => {
  it('is off by default; true, or the proxies as addresses, CIDRs or proxy-addr range names', () => {
    expect(loadConfig(VALID).trustProxy).toBe(false)
    expect(loadConfig({ ...VALID, TRUST_PROXY: 'false' }).trustProxy).toBe(false)
    expect(loadConfig({ ...VALID, TRUST_PROXY: 'true' }).trustProxy).toBe(true)
    expect(loadConfig({ ...VALID, TRUST_PROXY: '127.0.0.1' }).trustProxy).toEqual(['127.0.0.1'])
    expect(loadConfig({ ...VALID, TRUST_PROXY: '10.0.0.0/8, fd00::/8,loopback' }).trustProxy).toEqual([
      '10.0.0.0/8',
      'fd00::/8',
      'loopback',
    ])
  })
  it('refuses a hop count (Fastify would trust nothing for it), bad addresses and prefixes', () => {
    for (const bad of ['1', '2', 'yes', '10.0.0.0/33', '::1/129', '300.1.1.1', '10.0.0.1/8/1', 'proxy.example', ','])
      expect(() => loadConfig({ ...VALID, TRUST_PROXY: bad }), bad).toThrow(/TRUST_PROXY/)
  })
})
