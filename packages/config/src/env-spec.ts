/**
 * The environment's variables (spec 8.3 and the service's operational ones): each one's schema,
 * default and check. env.ts reads them; env-config.ts says which each process reads and what it
 * makes of them.
 */
import { validateMnemonic } from '@scure/bip39'
import { wordlist } from '@scure/bip39/wordlists/english.js'
import Type, { type Static, type TSchema } from 'typebox'
import { CHAIN_NAMES } from './chain-names'
import {
  address,
  type Check,
  DECIMAL,
  INT,
  MAX_API_PROCESSES,
  positiveInt,
  privateKey,
  rate,
  reconcileEpsilon,
  str,
  trustProxy,
  url,
  usdcDecimals,
} from './env-checks'
import { l2TargetsCheck } from './l2-targets'
import { depositXpubProblem } from './xpub'

export { CHAIN_NAMES, type ChainName, L2_CHAIN_NAMES } from './chain-names'

export const RECONCILE_MODES = ['observe', 'enforce'] as const
export type ReconcileMode = (typeof RECONCILE_MODES)[number]
export const NODE_ENVS = ['development', 'test', 'production'] as const
export const FEE_SHARE_POLICIES = ['refuse', 'warn', 'off'] as const
export type FeeSharePolicy = (typeof FEE_SHARE_POLICIES)[number]

export interface VarSpec {
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
  /**
   * Derive v3's HTTP base and socket (…/v3, …/v3/ws), the only protocol the service speaks: v2 was retired, and
   * EXCHANGE_PROTOCOL with anything but `v3` is refused (env.ts RETIRED_ENV; docs/exchange-v3.md)
   */
  EXCHANGE_HTTP_URL: { schema: str(), check: url('http:', 'https:') },
  EXCHANGE_WS_URL: { schema: str(), check: url('ws:', 'wss:') },
  EXCHANGE_CHAIN_RPC_URL: { schema: str(), check: url('http:', 'https:', 'ws:', 'wss:') },
  MASTER_PRIVATE_KEY: { schema: str(), secret: true, check: privateKey },
  /**
   * the trading and funding session key at Derive: orders, transfers between the platform's
   * subaccounts, reads; it must hold exactly that duty (docs/operations.md "Exchange session keys")
   */
  SESSION_PRIVATE_KEY: { schema: str(), secret: true, check: privateKey },
  GAS_WALLET_PRIVATE_KEY: { schema: str(), secret: true, check: privateKey },
  /** the platform's owner address at Derive (v3: its own address, which owns the funding subaccount) */
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
   * required by the worker: the platform's own Derive subaccount that holds its exchange funds; fundings leave it,
   * releases and fees return to it (docs/exchange-v3.md "Movements on v3")
   */
  EXCHANGE_FUNDING_SUBACCOUNT_ID: { schema: str({ pattern: INT }), optional: true, check: positiveInt },
  /**
   * required by the worker: Derive's OnchainActionManager on the L1
   * (EXCHANGE_CHAIN_ID), through which the bridge tick deposits into the funding subaccount
   * (docs/chains.md "Bridge" → "On Derive v3")
   */
  EXCHANGE_DEPOSIT_MANAGER_ADDRESS: { schema: str(), optional: true, check: address },
  /**
   * Derive's WithdrawalOutbox on the L1 (EXCHANGE_CHAIN_ID), whose `WithdrawalPaid` event the treasury
   * tick reads as the payout of its withdrawal; without it the treasury tick does nothing but say so
   * (docs/exchange-v3.md "Money out")
   */
  EXCHANGE_WITHDRAWAL_OUTBOX_ADDRESS: { schema: str(), optional: true, check: address },
  /**
   * the most a user's first funding may pay Derive for creating the user's subaccount, in USD (derive-ts:
   * "1 USD standard"). The creation is signed with it as `max_fee_usd` and sends it on top of the amount, the fee
   * taken is journalled as the platform's; a higher fee fails the funding safely; 0 signs no fee, which Derive
   * refuses (docs/exchange-v3.md "Movements on v3")
   */
  EXCHANGE_SUBACCOUNT_CREATION_FEE_CAP_USD: {
    schema: str({ pattern: DECIMAL }),
    default: '1',
    check: (v) => ((v.split('.')[1] ?? '').length <= 6 ? undefined : 'must have at most 6 decimals (USDC)'),
  },
  /**
   * (operational) during a renewal, the next trading key, registered before the current one expires:
   * the worker signs with whichever of the two the exchange knows and that lives longer
   */
  SESSION_PRIVATE_KEY_NEXT: { schema: str(), secret: true, optional: true, check: privateKey },
  /**
   * (operational) the payout session key: withdraw scope only, on the funding subaccount only, paying only
   * the whitelisted hot wallets; the treasury tick's L1 withdrawals need it
   */
  EXCHANGE_PAYOUT_SESSION_KEY: { schema: str(), secret: true, optional: true, check: privateKey },
  /** (operational) during a renewal, the next payout key */
  EXCHANGE_PAYOUT_SESSION_KEY_NEXT: { schema: str(), secret: true, optional: true, check: privateKey },
  /** (operational) the session-key tick alerts this many days before any configured key expires */
  EXCHANGE_SESSION_KEY_ALERT_DAYS: { schema: str({ pattern: INT }), default: '14', check: positiveInt },
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
  /**
   * the operator desk's own listener (docs/operations.md): off when unset; never the public PORT.
   * Operators sign in with their own names (the operators CLI creates them), or through ADMIN_AUTH=proxy
   */
  ADMIN_PORT: {
    schema: str({ pattern: INT }),
    optional: true,
    check: (v) => (Number(v) < 65536 ? undefined : 'must be a TCP port'),
  },
  /**
   * how the desk and Bull Board know who the operator is: `password` (the default: each operator signs
   * in with their name and password, kept as a scrypt hash in the operators table) or `proxy` (an
   * authenticating reverse proxy names the operator in ADMIN_PROXY_USER_HEADER, believed only with
   * ADMIN_PROXY_SECRET in x-proxy-secret); either way the role comes from the operators table
   */
  ADMIN_AUTH: { schema: Type.Union([Type.Literal('password'), Type.Literal('proxy')]), default: 'password' },
  /** ADMIN_AUTH=proxy: the request header that carries the operator's name */
  ADMIN_PROXY_USER_HEADER: { schema: str({ pattern: '^[a-z0-9-]{1,64}$' }), default: 'x-forwarded-user' },
  /** ADMIN_AUTH=proxy: the secret the proxy sends in x-proxy-secret; without it the name header is not believed */
  ADMIN_PROXY_SECRET: { schema: str({ minLength: 32 }), secret: true, optional: true },
  /**
   * how many approvers (other than the proposer) a decision that releases money needs
   * (docs/operations.md "Approvals"): 1 to 5; unset, 2 when NODE_ENV=production and 1 otherwise
   */
  ADMIN_APPROVALS_REQUIRED: {
    schema: str({ pattern: INT }),
    optional: true,
    check: (v) => (Number(v) >= 1 && Number(v) <= 5 ? undefined : 'must be 1 to 5'),
  },
  /**
   * Bull Board at /admin/queues on the public port, behind the operators' sign-in: `true` or `false`
   * (the default: not mounted)
   */
  BULL_BOARD_ENABLED: { schema: Type.Union([Type.Literal('true'), Type.Literal('false')]), default: 'false' },
  /**
   * Bull Board shows the queues read-only unless this is `false` (then an operator of role operator can
   * retry, promote, clean and remove jobs, each recorded: an operator's tool, best kept off)
   */
  BULL_BOARD_READ_ONLY: { schema: Type.Union([Type.Literal('true'), Type.Literal('false')]), default: 'true' },
  /**
   * the scrape credential of GET /metrics, sent as `Authorization: Bearer <token>` (Prometheus'
   * `authorization` or `bearer_token`); unset, /metrics is open outside production and not served in production
   */
  METRICS_TOKEN: { schema: str({ minLength: 32 }), secret: true, optional: true },
  /** the interface the operator desk binds to: loopback unless an operator opens it wider */
  ADMIN_HOST: { schema: str(), default: '127.0.0.1' },
  /** sign-in attempts per IP per minute on /auth/* */
  AUTH_RATE_LIMIT_PER_MINUTE: { schema: str({ pattern: INT }), default: '120', check: positiveInt },
  /**
   * the local run and tests: one local node per chain (docs/chains.md "Local run: four chains"). Each chain's
   * TestUSDC, and the chain id of the Optimism, Base and Arbitrum stand-ins (Ethereum's is EXCHANGE_CHAIN_ID: the
   * local Ethereum is the exchange's L1). All seven together or none; the ids distinct; refused in production
   */
  USDC_ADDRESS_LOCAL_ETHEREUM: { schema: str(), optional: true, check: address },
  USDC_ADDRESS_LOCAL_OPTIMISM: { schema: str(), optional: true, check: address },
  USDC_ADDRESS_LOCAL_BASE: { schema: str(), optional: true, check: address },
  USDC_ADDRESS_LOCAL_ARBITRUM: { schema: str(), optional: true, check: address },
  CHAIN_ID_LOCAL_OPTIMISM: { schema: str({ pattern: INT }), optional: true, check: positiveInt },
  CHAIN_ID_LOCAL_BASE: { schema: str({ pattern: INT }), optional: true, check: positiveInt },
  CHAIN_ID_LOCAL_ARBITRUM: { schema: str({ pattern: INT }), optional: true, check: positiveInt },
  /**
   * Circle's attestation service (Iris), which signs the CCTP burns of the L2 route (docs/chains.md "The L2
   * route"); the local run and tests point it at the local attester (packages/attester)
   */
  CCTP_ATTESTATION_URL: { schema: str(), default: 'https://iris-api.circle.com', check: url('http:', 'https:') },
  /**
   * the local run and tests: the CCTP stand-ins (TokenMessengerV2, MessageTransmitterV2), at one address on every
   * local node as Circle's are on every chain; together, refused in production
   */
  CCTP_TOKEN_MESSENGER_LOCAL: { schema: str(), optional: true, check: address },
  CCTP_MESSAGE_TRANSMITTER_LOCAL: { schema: str(), optional: true, check: address },
  /**
   * the operator's targets per L2 hot wallet: `chain:target:minTransfer:maxFee:maxPerRun` (USDC), comma-separated;
   * an L2 not named takes BRIDGE_RETAIN_USDC:10:5:50000 (docs/chains.md "Rebalancing")
   */
  L2_TARGETS: { schema: str(), optional: true, check: l2TargetsCheck },
  /** ETH (a decimal) under which a chain's hot wallet alerts: ETH stays per chain (docs/chains.md "ETH on the L2s") */
  HOT_WALLET_ETH_ALERT: {
    schema: str({ pattern: DECIMAL }),
    default: '0.05',
    check: (v) => ((v.split('.')[1] ?? '').length <= 18 ? undefined : 'must have at most 18 decimals (ETH)'),
  },
  /**
   * the local run and tests: the constant-product pool (TestUSDC/TestWETH) and TestWETH on the local
   * node that stand in for a swap venue (docs/swaps.md); without them conversions wait, saying the
   * venue is not configured
   */
  SWAP_POOL_ADDRESS_LOCAL: { schema: str(), optional: true, check: address },
  WETH_ADDRESS_LOCAL: { schema: str(), optional: true, check: address },
  /** the chain the swap wallet trades on */
  SWAP_CHAIN: { schema: Type.Union(CHAIN_NAMES.map((c) => Type.Literal(c))), default: 'base' },
  /**
   * USDC (a decimal amount) the bridge tick leaves in each chain's hot wallet, above the requested
   * withdrawals there; only the surplus crosses to the exchange chain (docs/chains.md "Bridge")
   */
  BRIDGE_RETAIN_USDC: { schema: str({ pattern: DECIMAL }), default: '1000', check: usdcDecimals },
  /**
   * v3: USDC (a decimal amount) under which the Ethereum hot wallet, less its requested USDC withdrawals, is refilled
   * from the funding subaccount, up to BRIDGE_RETAIN_USDC; a floor above BRIDGE_RETAIN_USDC acts as it (docs/chains.md "Treasury")
   */
  TREASURY_FLOOR_USDC: { schema: str({ pattern: DECIMAL }), default: '500', check: usdcDecimals },
  /** v3: the most one treasury withdrawal moves, in USDC (a decimal amount) (docs/chains.md "Treasury") */
  TREASURY_MAX_WITHDRAW_USDC: { schema: str({ pattern: DECIMAL }), default: '50000', check: usdcDecimals },
  /**
   * v3: the `max_fee_usd` a treasury withdrawal signs (derive-ts: 1 USD standard); a higher fee fails the
   * withdrawal at the exchange, nothing moved (docs/exchange-v3.md "Money out")
   */
  TREASURY_WITHDRAW_MAX_FEE_USD: { schema: str({ pattern: DECIMAL }), default: '1' },
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

/** Names of the variables whose values must never be printed. */
/** Names of the variables whose values must never be printed. */
export const SECRET_ENV_NAMES: readonly EnvName[] = (Object.keys(ENV_SPEC) as EnvName[]).filter(
  (k) => (ENV_SPEC[k] as VarSpec).secret === true,
)

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
