import { availableParallelism } from 'node:os'
import { resolve } from 'node:path'
import { validateMnemonic } from '@scure/bip39'
import { wordlist } from '@scure/bip39/wordlists/english.js'
import Type, { type Static, type TSchema } from 'typebox'
import Value from 'typebox/value'
import { getAddress } from 'viem'
import {
  address,
  type Check,
  compareDecimal,
  DECIMAL,
  deepFreeze,
  INT,
  MAX_API_PROCESSES,
  parseTrustProxy,
  positiveInt,
  privateKey,
  rate,
  reconcileEpsilon,
  str,
  type TrustProxy,
  trustProxy,
  url,
} from './env-checks'
import { depositXpubOf, depositXpubProblem } from './xpub'

export { MAX_API_PROCESSES, type TrustProxy }

export const RECONCILE_MODES = ['observe', 'enforce'] as const
export type ReconcileMode = (typeof RECONCILE_MODES)[number]
export const NODE_ENVS = ['development', 'test', 'production'] as const
export const FEE_SHARE_POLICIES = ['refuse', 'warn', 'off'] as const
export type FeeSharePolicy = (typeof FEE_SHARE_POLICIES)[number]

interface VarSpec {
  schema: TSchema
  /** never printed, not even in part */
  secret?: boolean
  default?: string
  optional?: boolean
  /** a check of meaning beyond the schema; returns the reason or undefined */
  check?: Check
}

/** Every variable of spec 8.3, plus the operational ones this service adds (marked). */
export const ENV_SPEC = {
  NODE_ENV: { schema: Type.Union(NODE_ENVS.map((e) => Type.Literal(e))) },
  PORT: { schema: str({ pattern: INT }), check: (v) => (Number(v) < 65536 ? undefined : 'must be a TCP port') },
  TRADING_PROFILE: { schema: str({ pattern: '^[a-z][a-z0-9_-]*$', maxLength: 64 }) },
  DATABASE_URL: { schema: str(), secret: true, check: url('postgres:', 'postgresql:') },
  CACHE_URL: { schema: str(), secret: true, check: url('redis:', 'rediss:') },
  EXCHANGE_HTTP_URL: { schema: str(), check: url('http:', 'https:') },
  EXCHANGE_WS_URL: { schema: str(), check: url('ws:', 'wss:') },
  EXCHANGE_CHAIN_RPC_URL: { schema: str(), check: url('http:', 'https:', 'ws:', 'wss:') },
  MASTER_PRIVATE_KEY: { schema: str(), secret: true, check: privateKey },
  SESSION_PRIVATE_KEY: { schema: str(), secret: true, check: privateKey },
  GAS_WALLET_PRIVATE_KEY: { schema: str(), secret: true, check: privateKey },
  EXCHANGE_WALLET_ADDRESS: { schema: str(), check: address },
  PLATFORM_FEE_RATE: { schema: str({ pattern: DECIMAL }), check: rate },
  /**
   * (operational) the largest share of a leg's premium the exchange's and the platform's fees may
   * take, basis points; above it POST /quotes warns and POST /positions warns or refuses per
   * FEE_SHARE_POLICY (docs/trading.md "Economics")
   */
  MAX_FEE_SHARE_BPS: {
    schema: str({ pattern: INT }),
    default: '2500',
    check: (v) => (Number(v) <= 10_000 ? undefined : 'must be at most 10000 (100 %)'),
  },
  /** (operational) `refuse`, `warn` or `off`: what POST /positions does when fees exceed MAX_FEE_SHARE_BPS */
  FEE_SHARE_POLICY: {
    schema: Type.Union(FEE_SHARE_POLICIES.map((m) => Type.Literal(m))),
    default: 'warn',
  },
  /**
   * the largest |journal − exchange| difference reconciliation tolerates, as a decimal amount in
   * each currency's own units (0.01 = 0.01 USDC, 0.01 ETH, 0.01 BTC); docs/exchange.md
   */
  RECONCILE_EPSILON: { schema: str(), check: reconcileEpsilon },
  WEB_ORIGIN: {
    schema: str(),
    check: (v) => {
      for (const o of v.split(',')) {
        const bad = url('http:', 'https:')(o.trim())
        if (bad) return 'must be one or more comma-separated http(s) origins'
      }
      return undefined
    },
  },
  MASTER_MNEMONIC: {
    schema: str(),
    secret: true,
    check: (v) =>
      validateMnemonic(v.trim().split(/\s+/).join(' '), wordlist) ? undefined : 'must be a valid BIP-39 mnemonic',
  },
  JWT_SECRET: { schema: str({ minLength: 32 }), secret: true },
  SIWE_DOMAIN: {
    schema: str({ pattern: '^[^\\s/]+$', maxLength: 255 }),
  },
  EXCHANGE_CHAIN_ID: { schema: str({ pattern: INT }), check: positiveInt },
  WEBHOOK_SECRET: { schema: str({ minLength: 32 }), secret: true },
  WITHDRAWAL_MIN_USD: { schema: str({ pattern: DECIMAL }) },
  WITHDRAWAL_MAX_USD: { schema: str({ pattern: DECIMAL }) },
  WITHDRAWAL_STUCK_MINUTES: { schema: str({ pattern: INT }), check: positiveInt },
  RPC_URL_ETHEREUM: { schema: str(), secret: true, check: url('http:', 'https:', 'ws:', 'wss:') },
  RPC_URL_OPTIMISM: { schema: str(), secret: true, check: url('http:', 'https:', 'ws:', 'wss:') },
  RPC_URL_BASE: { schema: str(), secret: true, check: url('http:', 'https:', 'ws:', 'wss:') },
  RPC_URL_ARBITRUM: { schema: str(), secret: true, check: url('http:', 'https:', 'ws:', 'wss:') },
  SWAP_WALLET_PRIVATE_KEY: { schema: str(), secret: true, check: privateKey },
  PRE_CONVERT_LEAD_MINUTES: { schema: str({ pattern: INT }), default: '10', check: positiveInt },
  CONVERSION_FAST_TICK_SECONDS: { schema: str({ pattern: INT }), default: '5', check: positiveInt },
  CONVERSION_STUCK_MINUTES: { schema: str({ pattern: INT }), default: '30', check: positiveInt },
  WHEEL_ENABLED: { schema: Type.Union([Type.Literal('true'), Type.Literal('false')]), default: 'false' },
  RECONCILE_MODE: { schema: Type.Union(RECONCILE_MODES.map((m) => Type.Literal(m))), default: 'observe' },
  ALERT_BOT_TOKEN: { schema: str(), secret: true, optional: true },
  ALERT_CHAT_ID: { schema: str(), optional: true },
  // --- operational additions (not in spec 8.3; all have defaults or are optional) ---
  /** interface the API binds to */
  HOST: { schema: str(), default: '127.0.0.1' },
  LOG_LEVEL: {
    schema: Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l))),
    default: 'info',
  },
  /** comma-separated queue names this worker consumes; empty = all */
  WORKER_QUEUES: { schema: Type.String(), default: '' },
  /** jobs run at once per consumed queue, `queue=n` pairs (`deposits=8,trading=2`); the rest 4 */
  WORKER_CONCURRENCY: {
    schema: Type.String(),
    default: '',
    check: (v) =>
      v
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean)
        .every((p) => /^[a-z][a-z0-9_-]*=[1-9][0-9]{0,3}$/.test(p))
        ? undefined
        : 'must be comma-separated queue=n pairs, n from 1 to 9999',
  },
  /**
   * the local run and tests: `exchange` makes the worker's clock follow the exchange's time
   * (`public/get_time`, read before each job), so moving the Derive simulator's clock moves the
   * worker's too (scripts/demo.sh); refused in production
   */
  WORKER_CLOCK: { schema: Type.Union([Type.Literal('system'), Type.Literal('exchange')]), default: 'system' },
  /**
   * the Derive API the worker speaks: `v2` (default) or `v3`, whose EXCHANGE_HTTP_URL / EXCHANGE_WS_URL
   * are the v3 base and socket (…/v3, …/v3/ws) and EXCHANGE_WALLET_ADDRESS the owner's own address
   * (docs/exchange.md, docs/exchange-v3.md "What the client does on v3")
   */
  EXCHANGE_PROTOCOL: { schema: Type.Union([Type.Literal('v2'), Type.Literal('v3')]), default: 'v2' },
  /**
   * required with EXCHANGE_PROTOCOL=v3, unused on v2: the platform's own Derive subaccount that holds its exchange
   * funds (v2's Derive Wallet); fundings leave it, releases and fees return to it (docs/exchange-v3.md "Movements on v3")
   */
  EXCHANGE_FUNDING_SUBACCOUNT_ID: { schema: str({ pattern: INT }), optional: true, check: positiveInt },
  /**
   * the extended public key of m/44'/60'/0' (BIP-32 xpub) that deposit addresses m/44'/60'/0'/0/{i}
   * derive from: required by the API, which holds no mnemonic; optional for the worker, which then
   * refuses to start unless it is its own MASTER_MNEMONIC's (docs/architecture.md "Least privilege")
   */
  DEPOSIT_XPUB: { schema: str(), secret: true, optional: true, check: depositXpubProblem },
  /**
   * the API behind a reverse proxy: which hops' X-Forwarded-For to believe (Fastify's trustProxy),
   * so the per-IP sign-in limit counts clients, not the proxy; off by default
   */
  TRUST_PROXY: { schema: Type.String(), default: 'false', check: trustProxy },
  /**
   * how many API processes share PORT (node:cluster, docs/architecture.md "Using every core"): a number,
   * or `auto` for one per core; 1 (the default) runs one process and no cluster
   */
  API_PROCESSES: {
    schema: str(),
    default: '1',
    check: (v) =>
      v === 'auto' || (/^[0-9]+$/.test(v) && Number(v) >= 1 && Number(v) <= MAX_API_PROCESSES)
        ? undefined
        : `must be auto or a whole number from 1 to ${MAX_API_PROCESSES}`,
  },
  /** Bull Board and operator desk password (user "admin"); neither is served when unset */
  ADMIN_PASSWORD: { schema: str({ minLength: 16 }), secret: true, optional: true },
  /**
   * the operator desk's own listener (docs/operations.md): off when unset; never the public PORT.
   * Requires ADMIN_PASSWORD
   */
  ADMIN_PORT: {
    schema: str({ pattern: INT }),
    optional: true,
    check: (v) => (Number(v) < 65536 ? undefined : 'must be a TCP port'),
  },
  /**
   * Bull Board shows the queues read-only unless this is `false` (then it can retry, promote, clean
   * and remove jobs: an operator's tool, best kept off)
   */
  BULL_BOARD_READ_ONLY: { schema: Type.Union([Type.Literal('true'), Type.Literal('false')]), default: 'true' },
  /** the interface the operator desk binds to: loopback unless an operator opens it wider */
  ADMIN_HOST: { schema: str(), default: '127.0.0.1' },
  /** sign-in attempts per IP per minute on /auth/* */
  AUTH_RATE_LIMIT_PER_MINUTE: { schema: str({ pattern: INT }), default: '120', check: positiveInt },
  /**
   * the local run and tests: the TestUSDC deployed on the one local node that stands in for every
   * chain; when set, every chain's registry entry points at that node (docs/chains.md)
   */
  USDC_ADDRESS_LOCAL: { schema: str(), optional: true, check: address },
  /**
   * the local run and tests: the constant-product pool (TestUSDC/TestWETH) and TestWETH on the local
   * node that stand in for a swap venue (docs/swaps.md); without them conversions wait, saying the
   * venue is not configured
   */
  SWAP_POOL_ADDRESS_LOCAL: { schema: str(), optional: true, check: address },
  WETH_ADDRESS_LOCAL: { schema: str(), optional: true, check: address },
  /** the chain the swap wallet trades on */
  SWAP_CHAIN: {
    schema: Type.Union([
      Type.Literal('ethereum'),
      Type.Literal('optimism'),
      Type.Literal('base'),
      Type.Literal('arbitrum'),
    ]),
    default: 'base',
  },
  /**
   * USDC (a decimal amount) the bridge tick leaves in each chain's hot wallet, above the requested
   * withdrawals there; only the surplus crosses to the exchange chain (docs/chains.md "Bridge")
   */
  BRIDGE_RETAIN_USDC: {
    schema: str({ pattern: DECIMAL }),
    default: '1000',
    check: (v) => ((v.split('.')[1] ?? '').length <= 6 ? undefined : 'must have at most 6 decimals (USDC)'),
  },
  /** seconds between solvency runs (docs/solvency.md "Continuous solvency") */
  SOLVENCY_EVERY_SECONDS: { schema: str({ pattern: INT }), default: '300', check: positiveInt },
  /**
   * whether a solvency deficit raises the platform stop: `true` or `false`; unset, on when
   * NODE_ENV=production and off otherwise (a development chain is often reset under the journal)
   */
  PLATFORM_STOP_ON_DEFICIT: { schema: Type.Union([Type.Literal('true'), Type.Literal('false')]), optional: true },
  /** during a platform stop, withdrawals worth more than this (USD, decimal) are refused */
  PLATFORM_STOP_WITHDRAWAL_MAX_USD: { schema: str({ pattern: DECIMAL }), default: '1000' },
  /**
   * a built web console (`pnpm --filter @wh/web build`: apps/web/dist) the API serves under
   * /console/; relative paths from the API's working directory; unset, nothing is served there
   */
  CONSOLE_DIR: { schema: str(), optional: true },
} satisfies Record<string, VarSpec>

export type EnvName = keyof typeof ENV_SPEC

/**
 * What the API reads (loadApiConfig): no private key, no mnemonic. The worker's Config satisfies
 * it, so tests build the server from `loadConfig(testEnv())`.
 */
export interface ApiConfig {
  readonly nodeEnv: (typeof NODE_ENVS)[number]
  readonly host: string
  readonly port: number
  readonly logLevel: string
  readonly tradingProfile: string
  readonly databaseUrl: string
  readonly cacheUrl: string
  /** the exchange's HTTP API; its chain id, under which the local run's one node serves every chain */
  readonly exchange: { readonly httpUrl: string; readonly chainId: number }
  /** USDC_ADDRESS_LOCAL: set only for the local run and tests (refused in production) */
  readonly usdcAddressLocal: `0x${string}` | undefined
  readonly platformFeeRate: string
  /** MAX_FEE_SHARE_BPS and FEE_SHARE_POLICY (docs/trading.md "Economics") */
  readonly feeShare: { readonly maxBps: number; readonly policy: FeeSharePolicy }
  readonly webOrigins: readonly string[]
  readonly jwtSecret: string
  readonly siweDomain: string
  readonly webhookSecret: string
  readonly withdrawal: {
    readonly minUsd: string
    readonly maxUsd: string
    readonly stuckMinutes: number
    /** PLATFORM_STOP_WITHDRAWAL_MAX_USD: the largest withdrawal accepted while the platform is stopped */
    readonly stoppedMaxUsd: string
  }
  readonly rpcUrls: {
    readonly ethereum: string
    readonly optimism: string
    readonly base: string
    readonly arbitrum: string
  }
  readonly preConvertLeadMinutes: number
  readonly conversionFastTickSeconds: number
  readonly conversionStuckMinutes: number
  readonly wheelEnabled: boolean
  readonly adminPassword: string | undefined
  /** BULL_BOARD_READ_ONLY: Bull Board shows jobs but cannot act on them */
  readonly bullBoardReadOnly: boolean
  /** the operator desk's listener (ADMIN_HOST, ADMIN_PORT); undefined: not served */
  readonly adminListener: { readonly host: string; readonly port: number } | undefined
  readonly authRateLimitPerMinute: number
  /** the xpub of m/44'/60'/0' (DEPOSIT_XPUB; in the worker's Config, its mnemonic's) */
  readonly depositXpub: string
  /** TRUST_PROXY, as Fastify's trustProxy takes it; false = the socket's address is the client's */
  readonly trustProxy: TrustProxy
  /** API_PROCESSES resolved: the number of processes sharing PORT (1: no cluster) */
  readonly apiProcesses: number
  /** CONSOLE_DIR, an absolute path: the built web console served under /console/; undefined: not served */
  readonly consoleDir: string | undefined
}

/** The variables the API reads: spec 8.3's less every key, the mnemonic and what only the worker uses. */
export const API_ENV_NAMES = [
  'NODE_ENV',
  'PORT',
  'TRADING_PROFILE',
  'DATABASE_URL',
  'CACHE_URL',
  'EXCHANGE_HTTP_URL',
  'EXCHANGE_CHAIN_ID',
  'USDC_ADDRESS_LOCAL',
  'PLATFORM_FEE_RATE',
  'MAX_FEE_SHARE_BPS',
  'FEE_SHARE_POLICY',
  'WEB_ORIGIN',
  'JWT_SECRET',
  'SIWE_DOMAIN',
  'WEBHOOK_SECRET',
  'WITHDRAWAL_MIN_USD',
  'WITHDRAWAL_MAX_USD',
  'WITHDRAWAL_STUCK_MINUTES',
  'RPC_URL_ETHEREUM',
  'RPC_URL_OPTIMISM',
  'RPC_URL_BASE',
  'RPC_URL_ARBITRUM',
  'PRE_CONVERT_LEAD_MINUTES',
  'CONVERSION_FAST_TICK_SECONDS',
  'CONVERSION_STUCK_MINUTES',
  'WHEEL_ENABLED',
  'HOST',
  'LOG_LEVEL',
  'ADMIN_PASSWORD',
  'ADMIN_PORT',
  'ADMIN_HOST',
  'BULL_BOARD_READ_ONLY',
  'AUTH_RATE_LIMIT_PER_MINUTE',
  'DEPOSIT_XPUB',
  'TRUST_PROXY',
  'PLATFORM_STOP_WITHDRAWAL_MAX_USD',
  'API_PROCESSES',
  'CONSOLE_DIR',
] as const satisfies readonly EnvName[]

/**
 * What the API must not hold: every signing key, the mnemonic, and the schema owner's database URL
 * (read by `pnpm db:migrate` only). Refused by loadApiConfig when NODE_ENV=production.
 */
export const API_FORBIDDEN_ENV_NAMES = [
  'MASTER_PRIVATE_KEY',
  'SESSION_PRIVATE_KEY',
  'GAS_WALLET_PRIVATE_KEY',
  'SWAP_WALLET_PRIVATE_KEY',
  'MASTER_MNEMONIC',
  'DATABASE_OWNER_URL',
] as const

export interface Config extends ApiConfig {
  readonly exchange: {
    readonly httpUrl: string
    readonly wsUrl: string
    readonly chainRpcUrl: string
    readonly chainId: number
    readonly walletAddress: `0x${string}`
    /** EXCHANGE_PROTOCOL */
    readonly protocol: 'v2' | 'v3'
    /** EXCHANGE_FUNDING_SUBACCOUNT_ID (v3) */
    readonly fundingSubaccountId: number | undefined
  }
  readonly keys: {
    readonly masterPrivateKey: `0x${string}`
    readonly sessionPrivateKey: `0x${string}`
    readonly gasWalletPrivateKey: `0x${string}`
    readonly swapWalletPrivateKey: `0x${string}`
    readonly masterMnemonic: string
  }
  readonly reconcileEpsilon: string
  readonly reconcileMode: ReconcileMode
  /** docs/solvency.md "Continuous solvency" */
  readonly solvency: {
    readonly everyMs: number
    /** a deficit raises the platform stop */
    readonly stopOnDeficit: boolean
  }
  readonly alert: { readonly botToken: string; readonly chatId: string } | undefined
  readonly workerQueues: readonly string[]
  /** WORKER_CONCURRENCY: jobs at once per queue name (queues not named take the runtime's default) */
  readonly workerConcurrency: Readonly<Record<string, number>>
  /** WORKER_CLOCK: `exchange` only in the local run and tests */
  readonly workerClock: 'system' | 'exchange'
  /** BRIDGE_RETAIN_USDC: USDC kept in each hot wallet, in base units (6 decimals) */
  readonly bridgeRetainUsdcBaseUnits: bigint
  /** the local swap venue (SWAP_POOL_ADDRESS_LOCAL, WETH_ADDRESS_LOCAL); refused in production */
  readonly swapLocal: { readonly pool: `0x${string}`; readonly weth: `0x${string}` } | undefined
  readonly swapChain: 'ethereum' | 'optimism' | 'base' | 'arbitrum'
}

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

/** Names of the variables whose values must never be printed. */
export const SECRET_ENV_NAMES: readonly EnvName[] = (Object.keys(ENV_SPEC) as EnvName[]).filter(
  (k) => (ENV_SPEC[k] as VarSpec).secret === true,
)

/**
 * Reads and checks the environment.
 * @example const config = loadConfig(process.env)
 */
export function loadConfig(env: Readonly<Record<string, string | undefined>>): Config {
  const problems: Problem[] = []
  const v = readVars(env, Object.keys(ENV_SPEC) as EnvName[], problems)
  crossCheck(v, problems)
  if (v.EXCHANGE_PROTOCOL === 'v3' && v.EXCHANGE_FUNDING_SUBACCOUNT_ID === undefined)
    problems.push({ name: 'EXCHANGE_FUNDING_SUBACCOUNT_ID', reason: 'is required when EXCHANGE_PROTOCOL=v3' })
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
    exchange: {
      httpUrl: s('EXCHANGE_HTTP_URL'),
      wsUrl: s('EXCHANGE_WS_URL'),
      chainRpcUrl: s('EXCHANGE_CHAIN_RPC_URL'),
      chainId: Number(s('EXCHANGE_CHAIN_ID')),
      walletAddress: getAddress(s('EXCHANGE_WALLET_ADDRESS')),
      protocol: s('EXCHANGE_PROTOCOL') as Config['exchange']['protocol'],
      fundingSubaccountId: v.EXCHANGE_FUNDING_SUBACCOUNT_ID ? Number(v.EXCHANGE_FUNDING_SUBACCOUNT_ID) : undefined,
    },
    keys: {
      masterPrivateKey: hex('MASTER_PRIVATE_KEY'),
      sessionPrivateKey: hex('SESSION_PRIVATE_KEY'),
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
  const v = readVars(env, API_ENV_NAMES, problems, new Set<EnvName>(['DEPOSIT_XPUB']))
  crossCheck(v, problems)
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
function crossCheck(v: Partial<Record<EnvName, string>>, problems: Problem[]): void {
  if (v.ADMIN_PORT !== undefined && v.ADMIN_PASSWORD === undefined)
    problems.push({ name: 'ADMIN_PORT', reason: 'needs ADMIN_PASSWORD: the operator desk is never served without it' })
  if (v.ADMIN_PORT !== undefined && v.PORT !== undefined && v.ADMIN_PORT === v.PORT && v.PORT !== '0')
    problems.push({ name: 'ADMIN_PORT', reason: 'must not be the public PORT' })
  if (v.WITHDRAWAL_MIN_USD && v.WITHDRAWAL_MAX_USD && compareDecimal(v.WITHDRAWAL_MIN_USD, v.WITHDRAWAL_MAX_USD) > 0) {
    problems.push({ name: 'WITHDRAWAL_MIN_USD', reason: 'must not exceed WITHDRAWAL_MAX_USD' })
  }
  if ((v.ALERT_BOT_TOKEN === undefined) !== (v.ALERT_CHAT_ID === undefined)) {
    // spec 6.2: alerts need both; one alone is almost certainly a mistake, but not fatal
  }
  if (v.USDC_ADDRESS_LOCAL !== undefined && v.NODE_ENV === 'production') {
    // a local override would point every chain's USDC at a test contract: never with real money
    problems.push({ name: 'USDC_ADDRESS_LOCAL', reason: 'must not be set when NODE_ENV=production' })
  }
  for (const name of ['SWAP_POOL_ADDRESS_LOCAL', 'WETH_ADDRESS_LOCAL'] as const) {
    if (v[name] !== undefined && v.NODE_ENV === 'production')
      problems.push({ name, reason: 'must not be set when NODE_ENV=production' })
  }
  if ((v.SWAP_POOL_ADDRESS_LOCAL === undefined) !== (v.WETH_ADDRESS_LOCAL === undefined))
    problems.push({ name: 'SWAP_POOL_ADDRESS_LOCAL', reason: 'must be set together with WETH_ADDRESS_LOCAL' })
  if (v.WORKER_CLOCK === 'exchange' && v.NODE_ENV === 'production') {
    // the simulator's clock is for moving time in development; a deployment runs on its own
    problems.push({ name: 'WORKER_CLOCK', reason: 'must not be exchange when NODE_ENV=production' })
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
    usdcAddressLocal: v.USDC_ADDRESS_LOCAL === undefined ? undefined : getAddress(v.USDC_ADDRESS_LOCAL),
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
    adminPassword: v.ADMIN_PASSWORD,
    bullBoardReadOnly: s('BULL_BOARD_READ_ONLY') !== 'false',
    adminListener: v.ADMIN_PORT === undefined ? undefined : { host: s('ADMIN_HOST'), port: Number(v.ADMIN_PORT) },
    authRateLimitPerMinute: Number(s('AUTH_RATE_LIMIT_PER_MINUTE')),
    depositXpub,
    trustProxy: parseTrustProxy(s('TRUST_PROXY')) ?? false,
    apiProcesses: s('API_PROCESSES') === 'auto' ? availableParallelism() : Number(s('API_PROCESSES')),
    consoleDir: v.CONSOLE_DIR === undefined ? undefined : resolve(v.CONSOLE_DIR),
  }
}

export type EnvRecord = Partial<Record<EnvName, string>>
export type _EnvShape = Static<typeof envSchema>
/** The whole environment as one TypeBox object, for documentation and tooling. */
export const envSchema = Type.Object(
  Object.fromEntries(
    Object.entries(ENV_SPEC).map(([k, s]) => [
      k,
      (s as VarSpec).optional || (s as VarSpec).default !== undefined ? Type.Optional(s.schema) : s.schema,
    ]),
  ),
)

function describeSchemaFailure(schema: TSchema): string {
  const s = schema as { pattern?: string; minLength?: number; anyOf?: Array<{ const?: string }> }
  if (s.anyOf) return `must be one of: ${s.anyOf.map((a) => a.const).join(', ')}`
  if (s.pattern === INT) return 'must be a whole number'
  if (s.pattern === DECIMAL) return 'must be a decimal number'
  if (s.minLength && s.minLength > 1) return `must be at least ${s.minLength} characters`
  if (s.pattern) return 'has an invalid format'
  return 'is invalid'
}

/** A checked decimal USDC amount ('1000', '12.5') in base units (6 decimals), exactly. */
function usdcBaseUnits(v: string): bigint {
  const [int = '0', frac = ''] = v.split('.')
  return BigInt(int) * 1_000_000n + BigInt(frac.padEnd(6, '0') || '0')
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
