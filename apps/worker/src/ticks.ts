/**
 * Repeatable ticks: each a named job on a domain queue, registered as a BullMQ job
 * scheduler (upserted by id), so N replicas agree on one schedule and each period runs once.
 * Later issues add their ticks here (deposit scans, sweeps, funding, withdrawals, …).
 */

import type { Config } from '@wh/config'
import type { Clock } from '@wh/core'
import type { Sql } from '@wh/db'
import type { DeriveClient } from '@wh/exchange'
import type { QueueKey } from '@wh/jobs'
import type { SwapAdapter } from '@wh/swap'
import type {
  Alerter,
  ChainClients,
  ChainGuard,
  ChainInfo,
  ChainName,
  DepositKeyring,
  OutboxDeps,
  PlatformWallet,
} from '@wh/wallet'
import type { Job, Queue } from 'bullmq'
import type { Redis } from 'ioredis'
import type { LocalAccount } from 'viem'

/**
 * What processors share, built ONCE per process in main.ts (never at import time) and passed down:
 * a processor reloads its state from Postgres by id and acts through these.
 */
export interface WorkerDeps {
  readonly config: Config
  readonly sql: Sql
  /** a plain connection (locks, caches); BullMQ has its own */
  readonly redis: Redis
  /** the private keyring: signs a deposit address's own sweep (spec 2.1 rule 4) */
  readonly keyring: DepositKeyring
  readonly registry: ReadonlyMap<ChainName, ChainInfo>
  readonly clients: ReadonlyMap<ChainName, ChainClients>
  /** which chains' RPCs answer the registry's chain id (docs/hostile-world.md "Chains are who they say they are") */
  readonly chainGuard: ChainGuard
  /** GAS_WALLET_PRIVATE_KEY's account: tops deposit addresses up with gas */
  readonly gasWallet: LocalAccount
  /** the platform's hot wallet on `chain`: receives sweeps, sends withdrawals (docs/chains.md) */
  readonly hotWallet: (chain: ChainName) => LocalAccount
  /** the platform's own addresses (hot, gas, swap, exchange), registered at start for the API */
  readonly platformWallets: readonly PlatformWallet[]
  /**
   * the account of any key this process holds, by address (the platform's wallets, a deposit
   * address's own key): the outbox signs replacements of stuck transactions with it
   * (docs/hostile-world.md "Stuck transactions"; @wh/wallet's outboxOf builds the outbox's deps)
   */
  readonly signerOf: NonNullable<OutboxDeps['signerOf']>
  /** tests only: shorter bounds for replacing stuck transactions and holding contradicted ones */
  readonly outboxTuning?: Pick<OutboxDeps, 'replaceAfterMs' | 'contradictionHold'>
  /** the time source of every tick (tests pass the simulator's or a manual one) */
  readonly clock: Clock
  /** spec 6.2: the chat channel, or a warn line when it is not configured */
  readonly alerter: Alerter
  /**
   * the Derive client for EXCHANGE_WALLET_ADDRESS: SESSION_PRIVATE_KEY (…_NEXT) signs trading and movements,
   * EXCHANGE_PAYOUT_SESSION_KEY (…_NEXT) the L1 withdrawals
   */
  readonly exchange: DeriveClient
  /** the swap venue of conversions (docs/swaps.md): its adapter, the swap wallet, its chain */
  readonly swap: {
    readonly adapter: SwapAdapter
    /** SWAP_WALLET_PRIVATE_KEY's account */
    readonly wallet: LocalAccount
    readonly chain: ChainName
  }
}

export interface TickContext {
  readonly log: { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void }
  readonly deps: WorkerDeps
  /** every domain queue, for ticks that fan out one job per entity */
  readonly queues: ReadonlyMap<QueueKey, Queue>
}

export interface TickDefinition {
  /** job scheduler id and job name; stable across deployments */
  readonly name: string
  readonly queue: QueueKey
  /**
   * the period of the job scheduler; omitted for a processor that only runs the jobs a tick fans
   * out (e.g. one sweep per deposit), which has no schedule of its own
   */
  readonly everyMs?: number
  /** the period from the deployment's config, when a setting governs it (wins over everyMs) */
  readonly everyMsOf?: (config: Config) => number
  /** `token`: the job's lock token, for a processor that moves its job back to delayed (apps/worker/src/items/) */
  readonly process: (job: Job, ctx: TickContext, token?: string) => Promise<unknown>
}
