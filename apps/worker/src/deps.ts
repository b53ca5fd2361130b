/**
 * Builds WorkerDeps once per process: main.ts, the tests and the benchmarks all go through here,
 * so what a tick acts through in a test is what it acts through in production. Overrides only
 * re-point parts at the local stand-ins (a local node's chain id and USDC, the simulator's clock).
 */
import type { Config } from '@wh/config'
import { type Clock, FollowedClock, systemClock } from '@wh/core'
import type { Sql } from '@wh/db'
import { DeriveClient, type ExchangeLogger } from '@wh/exchange'
import { localPoolAdapter, notConfiguredSwapAdapter, type SwapAdapter } from '@wh/swap'
import {
  buildChainClients,
  buildChainRegistry,
  ChainGuard,
  type ChainName,
  type ChainOverride,
  type ClientOptions,
  configuredChainOverrides,
  createAlerter,
  DepositKeyring,
  type PlatformWallet,
} from '@wh/wallet'
import type { Redis } from 'ioredis'
import { type Address, getAddress, type LocalAccount } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import type { WorkerDeps } from './ticks'

export interface DepsIo {
  readonly sql: Sql
  readonly redis: Redis
  readonly log: { warn(obj: object, msg?: string): void; info(obj: object, msg?: string): void }
}

export interface DepsOverrides {
  /** per-chain stand-ins; defaults to what the config names (USDC_ADDRESS_LOCAL_*, CHAIN_ID_LOCAL_*) */
  readonly chains?: Partial<Record<ChainName, ChainOverride>>
  readonly clientOptions?: ClientOptions
  /** the time source of ticks and of the exchange client (tests pass the simulator's) */
  readonly clock?: Clock
  /** the Bot API origin (tests point it at a capture server) */
  readonly alertApiBaseUrl?: string
  readonly exchangeLogger?: ExchangeLogger
  /** an already-derived keyring (PBKDF2 takes a while; tests share one) */
  readonly keyring?: DepositKeyring
}

export function buildWorkerDeps(config: Config, io: DepsIo, o: DepsOverrides = {}): WorkerDeps {
  const registry = buildChainRegistry(config, o.chains ?? configuredChainOverrides(config))
  // the hot wallet is MASTER_PRIVATE_KEY's account on every chain (docs/chains.md "Hot wallet")
  const hot = privateKeyToAccount(config.keys.masterPrivateKey)
  // WORKER_CLOCK=exchange (the local run): the exchange's own time, read again before each job
  // (clock-sync.ts), so moving the simulator's clock moves every tick's "now" and the client's auth
  const clock: Clock =
    o.clock ?? (config.workerClock === 'exchange' ? new FollowedClock(() => exchange.getTime()) : systemClock)
  const clients = buildChainClients(registry, o.clientOptions)
  const keyring = o.keyring ?? DepositKeyring.fromMnemonic(config.keys.masterMnemonic)
  const gasWallet = privateKeyToAccount(config.keys.gasWalletPrivateKey)
  const swapWallet = privateKeyToAccount(config.keys.swapWalletPrivateKey)
  const alerter = createAlerter({
    botToken: config.alert?.botToken,
    chatId: config.alert?.chatId,
    log: io.log,
    ...(o.alertApiBaseUrl !== undefined && { apiBaseUrl: o.alertApiBaseUrl }),
  })
  const platformWallets: PlatformWallet[] = [
    { address: hot.address, role: 'hot' },
    { address: gasWallet.address, role: 'gas' },
    { address: swapWallet.address, role: 'swap' },
    { address: config.exchange.walletAddress, role: 'exchange' },
  ]
  const ownKeys = new Map<string, LocalAccount>([hot, gasWallet, swapWallet].map((a) => [a.address.toLowerCase(), a]))
  // the keys this process holds sign replacements of their stuck transactions: the platform's
  // wallets, and a deposit address's own key (spec 2.1 rule 4) found by its stored address
  const signerOf: WorkerDeps['signerOf'] = async (from: Address) => {
    const own = ownKeys.get(from.toLowerCase())
    if (own) return own
    const [row] = await io.sql<{ hd_index: number }[]>`
        select hd_index from deposit_addresses where address = ${getAddress(from)}`
    return row ? keyring.signer(row.hd_index).account : undefined
  }
  // Derive v3, the only protocol (docs/exchange-v3.md): the movements go through the platform's
  // funding subaccount
  const exchange = new DeriveClient({
    httpUrl: config.exchange.httpUrl,
    wsUrl: config.exchange.wsUrl,
    wallet: config.exchange.walletAddress,
    // a key per duty, each with its successor during a renewal (docs/operations.md "Exchange session keys")
    sessionKey: withNext(config.keys.sessionPrivateKey, config.keys.sessionPrivateKeyNext),
    ...(config.keys.payoutSessionKey && {
      payoutSessionKey: withNext(config.keys.payoutSessionKey, config.keys.payoutSessionKeyNext),
    }),
    chainId: config.exchange.chainId,
    ...(config.exchange.fundingSubaccountId !== undefined && {
      fundingSubaccountId: config.exchange.fundingSubaccountId,
    }),
    subaccountCreationFeeCapUsd: config.exchange.subaccountCreationFeeCapUsd,
    clock,
    ...(o.exchangeLogger && { logger: o.exchangeLogger }),
  })
  return {
    config,
    sql: io.sql,
    redis: io.redis,
    keyring,
    registry,
    clients,
    chainGuard: new ChainGuard(registry, clients),
    gasWallet,
    hotWallet: () => hot,
    platformWallets,
    signerOf,
    clock,
    alerter,
    swap: {
      adapter: swapAdapterOf(config, clients),
      wallet: swapWallet,
      chain: config.swapChain,
    },
    exchange,
  }
}

/** A duty's keys: the current one, and its successor when a renewal set one. */
function withNext(current: `0x${string}`, next: `0x${string}` | undefined): `0x${string}`[] {
  return next ? [current, next] : [current]
}

/**
 * The local pool when the local run (or a test) deployed one (SWAP_POOL_ADDRESS_LOCAL and
 * WETH_ADDRESS_LOCAL, on SWAP_CHAIN's node, against that chain's TestUSDC); otherwise the adapter that
 * refuses, so a conversion waits saying the venue is not configured instead of trading somewhere unexpected.
 */
function swapAdapterOf(config: Config, clients: ReturnType<typeof buildChainClients>): SwapAdapter {
  const usdc = clients.get(config.swapChain)?.info.tokens.find((t) => t.symbol === 'USDC')?.contract
  if (!config.swapLocal || !usdc) return notConfiguredSwapAdapter()
  return localPoolAdapter({
    clients,
    pools: {
      [config.swapChain]: {
        address: config.swapLocal.pool,
        tokens: [
          { currency: 'USDC', address: usdc, decimals: 6 },
          { currency: 'ETH', address: config.swapLocal.weth, decimals: 18 },
        ],
      },
    },
  })
}
