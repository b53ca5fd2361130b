/**
 * The one reader of the environment (spec 8.3). `loadConfig` is pure: it takes the
 * variables, checks presence and meaning of each, and either returns a frozen Config
 * or throws one ConfigError naming every bad variable. It never echoes a value.
 */
import { validateMnemonic } from '@scure/bip39'
import { wordlist } from '@scure/bip39/wordlists/english.js'
import Type, { type Static, type TSchema } from 'typebox'
import Value from 'typebox/value'
import { getAddress, isAddress } from 'viem'

export const RECONCILE_MODES = ['observe', 'enforce'] as const
export type ReconcileMode = (typeof RECONCILE_MODES)[number]
export const NODE_ENVS = ['development', 'test', 'production'] as const

type Check = (v: string) => string | undefined

interface VarSpec {
  schema: TSchema
  /** never printed, not even in part */
  secret?: boolean
  default?: string
  optional?: boolean
  /** a check of meaning beyond the schema; returns the reason or undefined */
  check?: Check
}

const str = (opts: Record<string, unknown> = {}) => Type.String({ minLength: 1, ...opts })
const HEX32 = '^0x[0-9a-fA-F]{64}$'
const INT = '^[0-9]+$'
const DECIMAL = '^[0-9]+(\\.[0-9]+)?$'

const url =
  (...protocols: string[]): Check =>
  (v) => {
    try {
      const u = new URL(v)
      return protocols.includes(u.protocol) ? undefined : `must be a ${protocols.join(' or ')} URL`
    } catch {
      return 'must be a URL'
    }
  }
const address: Check = (v) => (isAddress(v, { strict: false }) ? undefined : 'must be a 0x address')
const privateKey: Check = (v) => {
  if (!new RegExp(HEX32).test(v)) return 'must be 32 bytes of hex (0x + 64 hex digits)'
  const k = BigInt(v)
  // secp256k1 group order: a key must be in [1, n-1]
  const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n
  return k > 0n && k < n ? undefined : 'is not a valid secp256k1 private key'
}
/** At most 18 decimals: the finest currency held at the exchange (ETH) has 18, so more could never matter. */
const EPSILON = /^[0-9]{1,30}(\.[0-9]{1,18})?$/
const reconcileEpsilon: Check = (v) =>
  EPSILON.test(v)
    ? undefined
    : "must be a non-negative decimal amount in the currency's own units (e.g. 0.01), with at most 18 decimals"
const positiveInt: Check = (v) => (/^[0-9]+$/.test(v) && Number(v) > 0 ? undefined : 'must be a positive integer')
const rate: Check = (v) => (Number(v) <= 1 ? undefined : 'must be between 0 and 1')

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
  /** Bull Board password (user "admin"); the board is not mounted when unset */
  ADMIN_PASSWORD: { schema: str({ minLength: 16 }), secret: true, optional: true },
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
} satisfies Record<string, VarSpec>

export type EnvName = keyof typeof ENV_SPEC

export interface Config {
  readonly nodeEnv: (typeof NODE_ENVS)[number]
  readonly host: string
  readonly port: number
  readonly logLevel: string
  readonly tradingProfile: string
  readonly databaseUrl: string
  readonly cacheUrl: string
  readonly exchange: {
    readonly httpUrl: string
    readonly wsUrl: string
    readonly chainRpcUrl: string
    readonly chainId: number
    readonly walletAddress: `0x${string}`
  }
  readonly keys: {
    readonly masterPrivateKey: `0x${string}`
    readonly sessionPrivateKey: `0x${string}`
    readonly gasWalletPrivateKey: `0x${string}`
    readonly swapWalletPrivateKey: `0x${string}`
    readonly masterMnemonic: string
  }
  readonly platformFeeRate: string
  readonly reconcileEpsilon: string
  readonly reconcileMode: ReconcileMode
  readonly webOrigins: readonly string[]
  readonly jwtSecret: string
  readonly siweDomain: string
  readonly webhookSecret: string
  readonly withdrawal: { readonly minUsd: string; readonly maxUsd: string; readonly stuckMinutes: number }
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
  readonly alert: { readonly botToken: string; readonly chatId: string } | undefined
  readonly workerQueues: readonly string[]
  /** WORKER_CONCURRENCY: jobs at once per queue name (queues not named take the runtime's default) */
  readonly workerConcurrency: Readonly<Record<string, number>>
  /** WORKER_CLOCK: `exchange` only in the local run and tests */
  readonly workerClock: 'system' | 'exchange'
  readonly adminPassword: string | undefined
  readonly authRateLimitPerMinute: number
  /** USDC_ADDRESS_LOCAL: set only for the local run and tests (refused in production) */
  readonly usdcAddressLocal: `0x${string}` | undefined
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
  const problems: Array<{ name: string; reason: string }> = []
  const v = {} as Record<EnvName, string | undefined>
  for (const name of Object.keys(ENV_SPEC) as EnvName[]) {
    const spec = ENV_SPEC[name] as VarSpec
    const raw = env[name]
    const value = raw === undefined || raw === '' ? spec.default : raw
    if (value === undefined) {
      if (!spec.optional) problems.push({ name, reason: 'is required but missing' })
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
  if (problems.length > 0) throw new ConfigError(problems)

  const s = (n: EnvName) => v[n] as string
  const hex = (n: EnvName) => s(n) as `0x${string}`
  return deepFreeze({
    nodeEnv: s('NODE_ENV') as Config['nodeEnv'],
    host: s('HOST'),
    port: Number(s('PORT')),
    logLevel: s('LOG_LEVEL'),
    tradingProfile: s('TRADING_PROFILE'),
    databaseUrl: s('DATABASE_URL'),
    cacheUrl: s('CACHE_URL'),
    exchange: {
      httpUrl: s('EXCHANGE_HTTP_URL'),
      wsUrl: s('EXCHANGE_WS_URL'),
      chainRpcUrl: s('EXCHANGE_CHAIN_RPC_URL'),
      chainId: Number(s('EXCHANGE_CHAIN_ID')),
      walletAddress: getAddress(s('EXCHANGE_WALLET_ADDRESS')),
    },
    keys: {
      masterPrivateKey: hex('MASTER_PRIVATE_KEY'),
      sessionPrivateKey: hex('SESSION_PRIVATE_KEY'),
      gasWalletPrivateKey: hex('GAS_WALLET_PRIVATE_KEY'),
      swapWalletPrivateKey: hex('SWAP_WALLET_PRIVATE_KEY'),
      masterMnemonic: s('MASTER_MNEMONIC').trim().split(/\s+/).join(' '),
    },
    platformFeeRate: s('PLATFORM_FEE_RATE'),
    reconcileEpsilon: s('RECONCILE_EPSILON'),
    reconcileMode: s('RECONCILE_MODE') as ReconcileMode,
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
    adminPassword: v.ADMIN_PASSWORD,
    authRateLimitPerMinute: Number(s('AUTH_RATE_LIMIT_PER_MINUTE')),
    usdcAddressLocal: v.USDC_ADDRESS_LOCAL === undefined ? undefined : getAddress(v.USDC_ADDRESS_LOCAL),
    bridgeRetainUsdcBaseUnits: usdcBaseUnits(s('BRIDGE_RETAIN_USDC')),
    swapLocal:
      v.SWAP_POOL_ADDRESS_LOCAL !== undefined && v.WETH_ADDRESS_LOCAL !== undefined
        ? { pool: getAddress(v.SWAP_POOL_ADDRESS_LOCAL), weth: getAddress(v.WETH_ADDRESS_LOCAL) }
        : undefined,
    swapChain: s('SWAP_CHAIN') as Config['swapChain'],
  } satisfies Config)
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

function compareDecimal(a: string, b: string): number {
  const [ai = '', af = ''] = a.split('.')
  const [bi = '', bf = ''] = b.split('.')
  const len = Math.max(af.length, bf.length)
  const x = BigInt(ai + af.padEnd(len, '0'))
  const y = BigInt(bi + bf.padEnd(len, '0'))
  return x < y ? -1 : x > y ? 1 : 0
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object') {
    for (const val of Object.values(o)) deepFreeze(val)
    Object.freeze(o)
  }
  return o
}

/**
 * For a process's main.ts: fills unset variables from .env.local, reads the environment, and on a
 * bad one prints the ConfigError (names, never values) and exits non-zero.
 */
export function loadConfigOrExit(read: () => Readonly<Record<string, string | undefined>>): Config {
  try {
    return loadConfig(read())
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(e.message)
      process.exit(1)
    }
    throw e
  }
}
