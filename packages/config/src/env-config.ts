/**
 * What each process reads of the environment: the API (ApiConfig, API_ENV_NAMES, and what it must
 * not hold) and the worker (Config, every variable). env.ts builds them.
 */
import type { TrustProxy } from './env-checks'
import type { ChainName, EnvName, FeeSharePolicy, NODE_ENVS, ReconcileMode } from './env-spec'
import type { L2ChainName, L2Target } from './l2-targets'

/** A local node standing in for one chain (the local run and tests). */
export interface LocalChain {
  readonly chainId: number
  /** its TestUSDC */
  readonly usdc: `0x${string}`
}

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
  /** the exchange's HTTP API (Derive v3; public reads); its chain id (its L1's: the local run's Ethereum node) */
  readonly exchange: { readonly httpUrl: string; readonly chainId: number }
  /**
   * USDC_ADDRESS_LOCAL_* and CHAIN_ID_LOCAL_*: one local node per chain, only in the local run and tests
   * (refused in production); undefined: the public deployments
   */
  readonly localChains: Readonly<Record<ChainName, LocalChain>> | undefined
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
  /** who the operators are and how many approve a decision (docs/operations.md "Operators and roles") */
  readonly operators: {
    /** ADMIN_AUTH: passwords of the operators table, or an authenticating proxy's name header (with its secret) */
    readonly auth:
      | { readonly kind: 'password' }
      | { readonly kind: 'proxy'; readonly userHeader: string; readonly secret: string }
    /** ADMIN_APPROVALS_REQUIRED resolved: 2 in production unless set */
    readonly approvalsRequired: number
  }
  /** BULL_BOARD_ENABLED: Bull Board on the public port; `readOnly` (BULL_BOARD_READ_ONLY): shows jobs, cannot act */
  readonly bullBoard: { readonly readOnly: boolean } | undefined
  /** METRICS_TOKEN: the bearer credential of GET /metrics */
  readonly metricsToken: string | undefined
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
  'USDC_ADDRESS_LOCAL_ETHEREUM',
  'USDC_ADDRESS_LOCAL_OPTIMISM',
  'USDC_ADDRESS_LOCAL_BASE',
  'USDC_ADDRESS_LOCAL_ARBITRUM',
  'CHAIN_ID_LOCAL_OPTIMISM',
  'CHAIN_ID_LOCAL_BASE',
  'CHAIN_ID_LOCAL_ARBITRUM',
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
  'ADMIN_PORT',
  'ADMIN_HOST',
  'ADMIN_AUTH',
  'ADMIN_PROXY_USER_HEADER',
  'ADMIN_PROXY_SECRET',
  'ADMIN_APPROVALS_REQUIRED',
  'BULL_BOARD_ENABLED',
  'BULL_BOARD_READ_ONLY',
  'METRICS_TOKEN',
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
  'SESSION_PRIVATE_KEY_NEXT',
  'EXCHANGE_PAYOUT_SESSION_KEY',
  'EXCHANGE_PAYOUT_SESSION_KEY_NEXT',
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
    /** EXCHANGE_FUNDING_SUBACCOUNT_ID (undefined only in the local run's setup, which opens it) */
    readonly fundingSubaccountId: number | undefined
    /** EXCHANGE_DEPOSIT_MANAGER_ADDRESS (undefined only in the local run's setup, which deploys it) */
    readonly depositManager: `0x${string}` | undefined
    /** EXCHANGE_WITHDRAWAL_OUTBOX_ADDRESS: the L1 contract that pays withdrawals out */
    readonly withdrawalOutbox: `0x${string}` | undefined
    /** EXCHANGE_SUBACCOUNT_CREATION_FEE_CAP_USD: a decimal in USD */
    readonly subaccountCreationFeeCapUsd: string
    /** EXCHANGE_SESSION_KEY_ALERT_DAYS: alert this many days before a configured session key expires */
    readonly sessionKeyAlertDays: number
  }
  readonly keys: {
    readonly masterPrivateKey: `0x${string}`
    /** SESSION_PRIVATE_KEY: the trading and funding key */
    readonly sessionPrivateKey: `0x${string}`
    /** SESSION_PRIVATE_KEY_NEXT: its successor during a renewal */
    readonly sessionPrivateKeyNext: `0x${string}` | undefined
    /** EXCHANGE_PAYOUT_SESSION_KEY: the payout key (L1 withdrawals); undefined: the treasury does not withdraw */
    readonly payoutSessionKey: `0x${string}` | undefined
    /** EXCHANGE_PAYOUT_SESSION_KEY_NEXT: its successor during a renewal */
    readonly payoutSessionKeyNext: `0x${string}` | undefined
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
  /** the treasury tick (the Ethereum hot wallet refilled from the funding subaccount), amounts in USDC base units */
  readonly treasury: {
    /** TREASURY_FLOOR_USDC */
    readonly floorUsdcBaseUnits: bigint
    /** TREASURY_MAX_WITHDRAW_USDC */
    readonly maxWithdrawUsdcBaseUnits: bigint
    /** TREASURY_WITHDRAW_MAX_FEE_USD: a decimal in USD */
    readonly withdrawMaxFeeUsd: string
  }
  /** the L2 route over Circle's CCTP (docs/chains.md "The L2 route") */
  readonly cctp: {
    /** CCTP_ATTESTATION_URL */
    readonly attestationUrl: string
    /** CCTP_TOKEN_MESSENGER_LOCAL, CCTP_MESSAGE_TRANSMITTER_LOCAL: the local stand-ins; undefined: Circle's */
    readonly local: { readonly tokenMessenger: `0x${string}`; readonly messageTransmitter: `0x${string}` } | undefined
  }
  /** L2_TARGETS: the operator's targets per L2 hot wallet, USDC base units */
  readonly l2Targets: Readonly<Record<L2ChainName, L2Target>>
  /** HOT_WALLET_ETH_ALERT, in wei */
  readonly hotWalletEthAlertWei: bigint
  /** the local swap venue (SWAP_POOL_ADDRESS_LOCAL, WETH_ADDRESS_LOCAL); refused in production */
  readonly swapLocal: { readonly pool: `0x${string}`; readonly weth: `0x${string}` } | undefined
  readonly swapChain: ChainName
}
