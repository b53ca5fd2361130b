/**
 * What the treasury's runs read (docs/chains.md "Bridge", "Treasury", "The L2 route"): the worker's deps satisfy
 * these structurally and are passed as they are. A file of its own, so the runs import it and not each other.
 */
import type { Config } from '@wh/config'
import type { Clock } from '@wh/core'
import type { Sql } from '@wh/db'
import type { DeriveClient } from '@wh/exchange'
import type { Alerter, ChainClients, ChainInfo, ChainName, OutboxSource } from '@wh/wallet'
import type { Redis } from 'ioredis'
import type { LocalAccount } from 'viem'

/** The settings the bridge, the treasury and the L2 route read. */
export type TreasuryConfig = Pick<
  Config,
  | 'exchange'
  | 'keys'
  | 'treasury'
  | 'bridgeRetainUsdcBaseUnits'
  | 'l2Targets'
  | 'cctp'
  | 'localChains'
  | 'hotWalletEthAlertWei'
>

/** The platform's hot wallets and what signs, sends and records their transactions (the outbox). */
export interface HotWalletDeps {
  readonly config: TreasuryConfig
  readonly sql: Sql
  readonly clients: ReadonlyMap<ChainName, ChainClients>
  readonly registry: ReadonlyMap<ChainName, ChainInfo>
  /** the platform's hot wallet on `chain` (docs/chains.md "Hot wallet") */
  readonly hotWallet: (chain: ChainName) => LocalAccount
  readonly alerter: Alerter
  readonly clock: Clock
  /** signs replacements of stuck transactions (@wh/wallet's outboxOf) */
  readonly signerOf: NonNullable<OutboxSource['signerOf']>
  /** tests only: shorter bounds for replacing stuck transactions */
  readonly outboxTuning?: OutboxSource['outboxTuning']
}

/** The bridge's and the treasury's: the hot wallets, Redis (the locks) and the exchange (the funding subaccount). */
export interface BridgeDeps extends HotWalletDeps {
  readonly redis: Redis
  readonly exchange: DeriveClient
}

export type TreasuryDeps = BridgeDeps

/** A tick's log (pino's, or a silent one in tests). */
export interface Log {
  info(obj: object, msg?: string): void
  warn(obj: object, msg?: string): void
}

/** A run's result as BullMQ stores a job's return value (JSON): bigints as decimal strings. */
export function summaryOf(result: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(result).map(([k, v]) => [k, typeof v === 'bigint' ? v.toString() : v]))
}
