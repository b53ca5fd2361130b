/**
 * Reading the environment: loadConfig (the worker: every variable), loadApiConfig (the API: its
 * own, no key), their checks across variables and the configuration they build. The variables are
 * env-spec.ts's; the shapes and which process reads what, env-config.ts's.
 */
import { availableParallelism } from 'node:os'
import { resolve } from 'node:path'
import { E18_DECIMALS, toBaseUnits, USDC_DECIMALS } from '@wh/core'
import type { TSchema } from 'typebox'
import Value from 'typebox/value'
import { getAddress } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import {
  compareDecimal,
  DECIMAL,
  deepFreeze,
  INT,
  MAX_API_PROCESSES,
  parseTrustProxy,
  type TrustProxy,
} from './env-checks'
import type { ApiConfig, Config } from './env-config'
import { API_ENV_NAMES, API_FORBIDDEN_ENV_NAMES } from './env-config'
import { localChainProblems, localChainsPart } from './env-local-chains'
import { ENV_SPEC, type EnvName, type FeeSharePolicy, type ReconcileMode, type VarSpec } from './env-spec'
import { parseL2Targets } from './l2-targets'
import { depositXpubOf } from './xpub'

export { API_ENV_NAMES, API_FORBIDDEN_ENV_NAMES, type ApiConfig, type Config, type LocalChain } from './env-config'
export {
  type _EnvShape,
  CHAIN_NAMES,
  type ChainName,
  ENV_SPEC,
  type EnvName,
  type EnvRecord,
  envSchema,
  FEE_SHARE_POLICIES,
  type FeeSharePolicy,
  L2_CHAIN_NAMES,
  NODE_ENVS,
  RECONCILE_MODES,
  type ReconcileMode,
  SECRET_ENV_NAMES,
} from './env-spec'
export { MAX_API_PROCESSES, type TrustProxy }

/** Thrown by loadConfig; names every bad variable, never a value. */
export class ConfigError extends Error {
  readonly problems: ReadonlyArray<{ name: string; reason: string }>
  constructor(problems: Array<{ name: string; reason: string }>) {
    super(
      `Invalid environment (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n` +
        problems.map((p) => `  - ${p.name}: ${p.reason}`).join('\n'),
    )
    this.name = 'ConfigError'
    this.problems = problems
  }
}

const ENV_NAMES: ReadonlySet<EnvName> = new Set(Object.keys(ENV_SPEC) as EnvName[])

/** What the local run's setup creates, so it reads the configuration without them (loadConfig's `setup`). */
const SET_UP_LOCALLY: ReadonlySet<EnvName> = new Set([
  'EXCHANGE_FUNDING_SUBACCOUNT_ID',
  'EXCHANGE_DEPOSIT_MANAGER_ADDRESS',
  'USDC_ADDRESS_LOCAL_ETHEREUM',
  'USDC_ADDRESS_LOCAL_OPTIMISM',
  'USDC_ADDRESS_LOCAL_BASE',
  'USDC_ADDRESS_LOCAL_ARBITRUM',
])

/**
 * Variables the service no longer reads, with the values still harmless: any other value is refused, naming why,
 * so nobody runs a deployment believing it does what the variable once asked for.
 */
const RETIRED_ENV: Readonly<Record<string, { readonly harmless: readonly string[]; readonly reason: string }>> = {
  EXCHANGE_PROTOCOL: {
    harmless: ['v3'],
    reason:
      'Derive retired its v2 protocol and the service speaks v3 only: unset EXCHANGE_PROTOCOL (README "Configuration")',
  },
  ADMIN_PASSWORD: {
    harmless: [],
    reason:
      'operators sign in with names and passwords of their own (apps/worker/src/cli/operators.ts creates them) and ' +
      '/metrics takes METRICS_TOKEN: unset ADMIN_PASSWORD (docs/operations.md "Operators and roles")',
  },
  USDC_ADDRESS_LOCAL: {
    harmless: [],
    reason:
      'one local node no longer stands in for every chain: each has its own, named by USDC_ADDRESS_LOCAL_<CHAIN> and ' +
      'CHAIN_ID_LOCAL_<CHAIN> (docs/chains.md "Local run: four chains"); unset it',
  },
}

/** A problem for each retired variable `env` sets to anything but a harmless value (its name, never the value). */
function retiredProblems(env: Readonly<Record<string, string | undefined>>, problems: Problem[]): void {
  for (const [name, r] of Object.entries(RETIRED_ENV)) {
    const value = env[name]
    if (value !== undefined && value !== '' && !r.harmless.includes(value)) problems.push({ name, reason: r.reason })
  }
}

/**
 * Reads and checks the environment. `setup`: for the local run's setup scripts, which read it
 * before they open the funding subaccount and deploy the deposit manager (scripts/dev.ts).
 * @example const config = loadConfig(process.env)
 */
export function loadConfig(env: Readonly<Record<string, string | undefined>>, o: { setup?: boolean } = {}): Config {
  const problems: Problem[] = []
  retiredProblems(env, problems)
  const v = readVars(env, Object.keys(ENV_SPEC) as EnvName[], problems)
  crossCheck(v, problems, o.setup ? new Set([...ENV_NAMES].filter((n) => !SET_UP_LOCALLY.has(n))) : ENV_NAMES)
  // the worker's own deposit account; DEPOSIT_XPUB, when set, must be it: a different one would make
  // the API show users addresses nobody can sweep
  const mnemonic = v.MASTER_MNEMONIC === undefined ? undefined : normaliseMnemonic(v.MASTER_MNEMONIC)
  const ownXpub = mnemonic === undefined ? undefined : depositXpubOf(mnemonic)
  if (ownXpub !== undefined && v.DEPOSIT_XPUB !== undefined && v.DEPOSIT_XPUB !== ownXpub)
    problems.push({
      name: 'DEPOSIT_XPUB',
      reason:
        "is not MASTER_MNEMONIC's m/44'/60'/0' public key: the API would show deposit addresses this worker cannot sweep " +
        '(apps/worker/src/cli/deposit-xpub.ts prints the right one)',
    })
  if (problems.length > 0) throw new ConfigError(problems)

  const s = (n: EnvName) => v[n] as string
  const hex = (n: EnvName) => s(n) as `0x${string}`
  return deepFreeze({
    ...apiPart(v, ownXpub as string),
    exchange: exchangePart(v),
    keys: {
      masterPrivateKey: hex('MASTER_PRIVATE_KEY'),
      sessionPrivateKey: hex('SESSION_PRIVATE_KEY'),
      sessionPrivateKeyNext: v.SESSION_PRIVATE_KEY_NEXT as `0x${string}` | undefined,
      payoutSessionKey: v.EXCHANGE_PAYOUT_SESSION_KEY as `0x${string}` | undefined,
      payoutSessionKeyNext: v.EXCHANGE_PAYOUT_SESSION_KEY_NEXT as `0x${string}` | undefined,
      gasWalletPrivateKey: hex('GAS_WALLET_PRIVATE_KEY'),
      swapWalletPrivateKey: hex('SWAP_WALLET_PRIVATE_KEY'),
      masterMnemonic: mnemonic as string,
    },
    reconcileEpsilon: s('RECONCILE_EPSILON'),
    reconcileMode: s('RECONCILE_MODE') as ReconcileMode,
    solvency: {
      everyMs: Number(s('SOLVENCY_EVERY_SECONDS')) * 1000,
      stopOnDeficit:
        v.PLATFORM_STOP_ON_DEFICIT === undefined ? v.NODE_ENV === 'production' : v.PLATFORM_STOP_ON_DEFICIT === 'true',
    },
    alert:
      v.ALERT_BOT_TOKEN !== undefined && v.ALERT_CHAT_ID !== undefined
        ? { botToken: v.ALERT_BOT_TOKEN, chatId: v.ALERT_CHAT_ID }
        : undefined,
    workerConcurrency: Object.fromEntries(
      s('WORKER_CONCURRENCY')
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean)
        .map((p) => {
          const [queue = '', n = '0'] = p.split('=')
          return [queue, Number(n)]
        }),
    ),
    workerQueues: s('WORKER_QUEUES')
      .split(',')
      .map((q) => q.trim())
      .filter(Boolean),
    workerClock: s('WORKER_CLOCK') as Config['workerClock'],
    bridgeRetainUsdcBaseUnits: usdcBaseUnits(s('BRIDGE_RETAIN_USDC')),
    treasury: {
      floorUsdcBaseUnits: usdcBaseUnits(s('TREASURY_FLOOR_USDC')),
      maxWithdrawUsdcBaseUnits: usdcBaseUnits(s('TREASURY_MAX_WITHDRAW_USDC')),
      withdrawMaxFeeUsd: s('TREASURY_WITHDRAW_MAX_FEE_USD'),
    },
    ...l2RoutePart(v),
    swapLocal:
      v.SWAP_POOL_ADDRESS_LOCAL !== undefined && v.WETH_ADDRESS_LOCAL !== undefined
        ? { pool: getAddress(v.SWAP_POOL_ADDRESS_LOCAL), weth: getAddress(v.WETH_ADDRESS_LOCAL) }
        : undefined,
    swapChain: s('SWAP_CHAIN') as Config['swapChain'],
  } satisfies Config)
}

/**
 * The API's environment (API_ENV_NAMES): the worker's less every key and the mnemonic, with
 * DEPOSIT_XPUB required. Variables it does not read are ignored, except that with NODE_ENV=production
 * any of API_FORBIDDEN_ENV_NAMES set is refused: the API never needs them, so their presence is a
 * deployment that hands the internet-facing process the keys (docs/architecture.md "Least privilege").
 */
export function loadApiConfig(env: Readonly<Record<string, string | undefined>>): ApiConfig {
  const problems: Problem[] = []
  retiredProblems(env, problems)
  const v = readVars(env, API_ENV_NAMES, problems, new Set<EnvName>(['DEPOSIT_XPUB']))
  crossCheck(v, problems, new Set(API_ENV_NAMES))
  if (v.NODE_ENV === 'production')
    for (const name of forbiddenApiEnv(env))
      problems.push({
        name,
        reason: 'must not be set for the API when NODE_ENV=production: the API holds no key (give it DEPOSIT_XPUB)',
      })
  if (problems.length > 0) throw new ConfigError(problems)
  return deepFreeze(apiPart(v, v.DEPOSIT_XPUB as string))
}

/** Which of API_FORBIDDEN_ENV_NAMES `env` sets (names only). */
export function forbiddenApiEnv(env: Readonly<Record<string, string | undefined>>): string[] {
  return API_FORBIDDEN_ENV_NAMES.filter((n) => env[n] !== undefined && env[n] !== '')
}

/**
 * MASTER_MNEMONIC alone, checked (for the deposit-xpub CLI, which must work while DEPOSIT_XPUB is
 * wrong or another variable is missing).
 */
export function loadMasterMnemonic(env: Readonly<Record<string, string | undefined>>): string {
  const problems: Problem[] = []
  const v = readVars(env, ['MASTER_MNEMONIC'], problems)
  if (problems.length > 0) throw new ConfigError(problems)
  return normaliseMnemonic(v.MASTER_MNEMONIC as string)
}

type Problem = { name: string; reason: string }

function normaliseMnemonic(m: string): string {
  return m.trim().split(/\s+/).join(' ')
}

/** Reads and checks `names` (the rest stay undefined); `required` makes optional ones required. */
function readVars(
  env: Readonly<Record<string, string | undefined>>,
  names: readonly EnvName[],
  problems: Problem[],
  required: ReadonlySet<EnvName> = new Set(),
): Partial<Record<EnvName, string>> {
  const v: Partial<Record<EnvName, string>> = {}
  for (const name of names) {
    const spec = ENV_SPEC[name] as VarSpec
    const raw = env[name]
    const value = raw === undefined || raw === '' ? spec.default : raw
    if (value === undefined) {
      if (!spec.optional || required.has(name)) problems.push({ name, reason: 'is required but missing' })
      continue
    }
    if (!Value.Check(spec.schema, value)) {
      problems.push({ name, reason: describeSchemaFailure(spec.schema) })
      continue
    }
    const bad = spec.check?.(value)
    if (bad) {
      problems.push({ name, reason: bad })
      continue
    }
    v[name] = value
  }
  return v
}

/** Checks across variables; each applies only when its variables were read. */
function crossCheck(v: Partial<Record<EnvName, string>>, problems: Problem[], read: ReadonlySet<EnvName>): void {
  if (v.ADMIN_AUTH === 'proxy' && v.ADMIN_PROXY_SECRET === undefined)
    problems.push({
      name: 'ADMIN_PROXY_SECRET',
      reason: "is required with ADMIN_AUTH=proxy: a name header is believed only with the proxy's secret",
    })
  if (v.ADMIN_PORT !== undefined && v.PORT !== undefined && v.ADMIN_PORT === v.PORT && v.PORT !== '0')
    problems.push({ name: 'ADMIN_PORT', reason: 'must not be the public PORT' })
  if (v.WITHDRAWAL_MIN_USD && v.WITHDRAWAL_MAX_USD && compareDecimal(v.WITHDRAWAL_MIN_USD, v.WITHDRAWAL_MAX_USD) > 0) {
    problems.push({ name: 'WITHDRAWAL_MIN_USD', reason: 'must not exceed WITHDRAWAL_MAX_USD' })
  }
  // the worker's movements need them (the local run's setup creates them); the API, which reads neither, only
  // reads the public wire
  for (const name of ['EXCHANGE_FUNDING_SUBACCOUNT_ID', 'EXCHANGE_DEPOSIT_MANAGER_ADDRESS'] as const)
    if (read.has(name) && v[name] === undefined) problems.push({ name, reason: 'is required but missing' })
  if ((v.ALERT_BOT_TOKEN === undefined) !== (v.ALERT_CHAT_ID === undefined)) {
    // spec 6.2: alerts need both; one alone is almost certainly a mistake, but not fatal
  }
  localChainProblems(v, problems, read)
  for (const name of [
    'SWAP_POOL_ADDRESS_LOCAL',
    'WETH_ADDRESS_LOCAL',
    'CCTP_TOKEN_MESSENGER_LOCAL',
    'CCTP_MESSAGE_TRANSMITTER_LOCAL',
  ] as const) {
    if (v[name] !== undefined && v.NODE_ENV === 'production')
      problems.push({ name, reason: 'must not be set when NODE_ENV=production' })
  }
  if ((v.CCTP_TOKEN_MESSENGER_LOCAL === undefined) !== (v.CCTP_MESSAGE_TRANSMITTER_LOCAL === undefined))
    problems.push({
      name: 'CCTP_TOKEN_MESSENGER_LOCAL',
      reason: 'must be set together with CCTP_MESSAGE_TRANSMITTER_LOCAL',
    })
  if ((v.SWAP_POOL_ADDRESS_LOCAL === undefined) !== (v.WETH_ADDRESS_LOCAL === undefined))
    problems.push({ name: 'SWAP_POOL_ADDRESS_LOCAL', reason: 'must be set together with WETH_ADDRESS_LOCAL' })
  keyProblems(v, problems)
  if (v.WORKER_CLOCK === 'exchange' && v.NODE_ENV === 'production') {
    // the simulator's clock is for moving time in development; a deployment runs on its own
    problems.push({ name: 'WORKER_CLOCK', reason: 'must not be exchange when NODE_ENV=production' })
  }
}

/** The L2 route's settings: CCTP's attestation service and local stand-ins, the L2 targets, the ETH alert. */
function l2RoutePart(v: Partial<Record<EnvName, string>>): Pick<Config, 'cctp' | 'l2Targets' | 'hotWalletEthAlertWei'> {
  const s = (n: EnvName) => v[n] as string
  return {
    cctp: {
      attestationUrl: s('CCTP_ATTESTATION_URL'),
      local:
        v.CCTP_TOKEN_MESSENGER_LOCAL !== undefined && v.CCTP_MESSAGE_TRANSMITTER_LOCAL !== undefined
          ? {
              tokenMessenger: getAddress(v.CCTP_TOKEN_MESSENGER_LOCAL),
              messageTransmitter: getAddress(v.CCTP_MESSAGE_TRANSMITTER_LOCAL),
            }
          : undefined,
    },
    l2Targets: parseL2Targets(v.L2_TARGETS ?? '', usdcBaseUnits(s('BRIDGE_RETAIN_USDC'))),
    hotWalletEthAlertWei: ethWei(s('HOT_WALLET_ETH_ALERT')),
  }
}

/** Every private key the worker may hold, by variable. */
const KEY_VARS = [
  'MASTER_PRIVATE_KEY',
  'GAS_WALLET_PRIVATE_KEY',
  'SWAP_WALLET_PRIVATE_KEY',
  'SESSION_PRIVATE_KEY',
  'SESSION_PRIVATE_KEY_NEXT',
  'EXCHANGE_PAYOUT_SESSION_KEY',
  'EXCHANGE_PAYOUT_SESSION_KEY_NEXT',
] as const satisfies readonly EnvName[]

/**
 * The owner key reaches no process: no key the worker holds may be EXCHANGE_WALLET_ADDRESS's (what the
 * owner alone may sign is signed by an operator, docs/operations.md "Exchange session keys"); and each
 * session key has its one duty, so no key serves two settings.
 */
function keyProblems(v: Partial<Record<EnvName, string>>, problems: Problem[]): void {
  const owner = v.EXCHANGE_WALLET_ADDRESS?.toLowerCase()
  const seen = new Map<string, EnvName>()
  for (const name of KEY_VARS) {
    const key = v[name]
    if (key === undefined) continue
    const address = privateKeyToAccount(key as `0x${string}`).address.toLowerCase()
    if (address === owner)
      problems.push({
        name,
        reason: "is the exchange owner's key (EXCHANGE_WALLET_ADDRESS): the owner key must reach no process",
      })
    const other = seen.get(address)
    if (other) problems.push({ name, reason: `is the same key as ${other}: each key has one duty` })
    seen.set(address, name)
  }
}

/** EXCHANGE_*: the exchange client's and the money path's settings (Derive v3). */
function exchangePart(v: Partial<Record<EnvName, string>>): Config['exchange'] {
  const s = (n: EnvName) => v[n] as string
  return {
    httpUrl: s('EXCHANGE_HTTP_URL'),
    wsUrl: s('EXCHANGE_WS_URL'),
    chainRpcUrl: s('EXCHANGE_CHAIN_RPC_URL'),
    chainId: Number(s('EXCHANGE_CHAIN_ID')),
    walletAddress: getAddress(s('EXCHANGE_WALLET_ADDRESS')),
    fundingSubaccountId: v.EXCHANGE_FUNDING_SUBACCOUNT_ID ? Number(v.EXCHANGE_FUNDING_SUBACCOUNT_ID) : undefined,
    depositManager: v.EXCHANGE_DEPOSIT_MANAGER_ADDRESS ? getAddress(v.EXCHANGE_DEPOSIT_MANAGER_ADDRESS) : undefined,
    withdrawalOutbox: v.EXCHANGE_WITHDRAWAL_OUTBOX_ADDRESS
      ? getAddress(v.EXCHANGE_WITHDRAWAL_OUTBOX_ADDRESS)
      : undefined,
    subaccountCreationFeeCapUsd: s('EXCHANGE_SUBACCOUNT_CREATION_FEE_CAP_USD'),
    sessionKeyAlertDays: Number(s('EXCHANGE_SESSION_KEY_ALERT_DAYS')),
  }
}

/** The part of the configuration the API reads, from checked variables. */
function apiPart(v: Partial<Record<EnvName, string>>, depositXpub: string): ApiConfig {
  const s = (n: EnvName) => v[n] as string
  return {
    nodeEnv: s('NODE_ENV') as Config['nodeEnv'],
    host: s('HOST'),
    port: Number(s('PORT')),
    logLevel: s('LOG_LEVEL'),
    tradingProfile: s('TRADING_PROFILE'),
    databaseUrl: s('DATABASE_URL'),
    cacheUrl: s('CACHE_URL'),
    exchange: { httpUrl: s('EXCHANGE_HTTP_URL'), chainId: Number(s('EXCHANGE_CHAIN_ID')) },
    localChains: localChainsPart(v),
    platformFeeRate: s('PLATFORM_FEE_RATE'),
    feeShare: { maxBps: Number(s('MAX_FEE_SHARE_BPS')), policy: s('FEE_SHARE_POLICY') as FeeSharePolicy },
    webOrigins: s('WEB_ORIGIN')
      .split(',')
      .map((o) => new URL(o.trim()).origin),
    jwtSecret: s('JWT_SECRET'),
    siweDomain: s('SIWE_DOMAIN'),
    webhookSecret: s('WEBHOOK_SECRET'),
    withdrawal: {
      minUsd: s('WITHDRAWAL_MIN_USD'),
      maxUsd: s('WITHDRAWAL_MAX_USD'),
      stuckMinutes: Number(s('WITHDRAWAL_STUCK_MINUTES')),
      stoppedMaxUsd: s('PLATFORM_STOP_WITHDRAWAL_MAX_USD'),
    },
    rpcUrls: {
      ethereum: s('RPC_URL_ETHEREUM'),
      optimism: s('RPC_URL_OPTIMISM'),
      base: s('RPC_URL_BASE'),
      arbitrum: s('RPC_URL_ARBITRUM'),
    },
    preConvertLeadMinutes: Number(s('PRE_CONVERT_LEAD_MINUTES')),
    conversionFastTickSeconds: Number(s('CONVERSION_FAST_TICK_SECONDS')),
    conversionStuckMinutes: Number(s('CONVERSION_STUCK_MINUTES')),
    wheelEnabled: s('WHEEL_ENABLED') === 'true',
    operators: {
      auth:
        s('ADMIN_AUTH') === 'proxy'
          ? { kind: 'proxy', userHeader: s('ADMIN_PROXY_USER_HEADER'), secret: v.ADMIN_PROXY_SECRET as string }
          : { kind: 'password' },
      approvalsRequired:
        v.ADMIN_APPROVALS_REQUIRED === undefined
          ? v.NODE_ENV === 'production'
            ? 2
            : 1
          : Number(v.ADMIN_APPROVALS_REQUIRED),
    },
    bullBoard: s('BULL_BOARD_ENABLED') === 'true' ? { readOnly: s('BULL_BOARD_READ_ONLY') !== 'false' } : undefined,
    metricsToken: v.METRICS_TOKEN,
    adminListener: v.ADMIN_PORT === undefined ? undefined : { host: s('ADMIN_HOST'), port: Number(v.ADMIN_PORT) },
    authRateLimitPerMinute: Number(s('AUTH_RATE_LIMIT_PER_MINUTE')),
    depositXpub,
    trustProxy: parseTrustProxy(s('TRUST_PROXY')) ?? false,
    apiProcesses: s('API_PROCESSES') === 'auto' ? availableParallelism() : Number(s('API_PROCESSES')),
    consoleDir: v.CONSOLE_DIR === undefined ? undefined : resolve(v.CONSOLE_DIR),
  }
}
function describeSchemaFailure(schema: TSchema): string {
  const s = schema as { pattern?: string; minLength?: number; anyOf?: Array<{ const?: string }> }
  if (s.anyOf) return `must be one of: ${s.anyOf.map((a) => a.const).join(', ')}`
  if (s.pattern === INT) return 'must be a whole number'
  if (s.pattern === DECIMAL) return 'must be a decimal number'
  if (s.minLength && s.minLength > 1) return `must be at least ${s.minLength} characters`
  if (s.pattern) return 'has an invalid format'
  return 'is invalid'
}

/** A checked decimal ETH amount ('0.05') in wei, exactly (@wh/core's toBaseUnits, as every amount). */
function ethWei(v: string): bigint {
  return toBaseUnits(v, E18_DECIMALS)
}

/** A checked decimal USDC amount ('1000', '12.5') in base units (6 decimals), exactly. */
function usdcBaseUnits(v: string): bigint {
  return toBaseUnits(v, USDC_DECIMALS)
}

/**
 * For a process's main.ts: reads the environment with `load` (loadConfig for the worker,
 * loadApiConfig for the API), and on a bad one prints the ConfigError (names, never values) and
 * exits non-zero.
 */
export function loadConfigOrExit(read: () => Readonly<Record<string, string | undefined>>): Config
export function loadConfigOrExit<T>(
  read: () => Readonly<Record<string, string | undefined>>,
  load: (env: Readonly<Record<string, string | undefined>>) => T,
): T
export function loadConfigOrExit<T>(
  read: () => Readonly<Record<string, string | undefined>>,
  load: (env: Readonly<Record<string, string | undefined>>) => T = loadConfig as unknown as (
    env: Readonly<Record<string, string | undefined>>,
  ) => T,
): T {
  try {
    return load(read())
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(e.message)
      process.exit(1)
    }
    throw e
  }
}
