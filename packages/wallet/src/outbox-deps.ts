/**
 * The outbox's dependencies (`OutboxDeps`), and how they are built from a processor's own: always
 * from the deps at hand (its Postgres, clients and registry), never carried as a copy that could
 * name another registry. A leaf of the outbox: outbox.ts and the files it runs (outbox-confirm.ts,
 * outbox-fill.ts) all take these deps, so they live apart from all three.
 */
import type { Sql } from '@wh/db'
import type { Address, LocalAccount } from 'viem'
import type { Alerter } from './alerts'
import type { ChainInfo, ChainName } from './chains'
import type { ChainClients } from './clients'
import type { OutboundRecord } from './outbox-store'

/** What the outbox runs on: its Postgres, a client per chain, the chain registry, and the optional parts. */
export interface OutboxDeps {
  sql: Sql
  clients: ReadonlyMap<ChainName, ChainClients>
  registry: ReadonlyMap<ChainName, ChainInfo>
  /**
   * The account that signs for `from` (the worker's keys and deposit addresses): lets a stuck
   * transaction be replaced with higher fees. Without it nothing is replaced.
   */
  signerOf?: (from: Address) => Promise<LocalAccount | undefined>
  /** where a hold is announced (spec 6.2); without it the hold is only in the row */
  alerter?: Alerter
  /** OUTBOUND_REPLACE_AFTER_MS unless given (tests shorten it) */
  replaceAfterMs?: number
  /** CONTRADICTION_HOLD_READINGS / _AFTER_MS unless given (tests shorten them) */
  contradictionHold?: { readings: number; afterMs: number }
  /**
   * Observation points for tests and tracing (optional, an addition to the shared contract):
   * `afterSigned` runs once the row is committed and before the first broadcast, the window the
   * crash tests kill the process in.
   */
  hooks?: {
    afterSigned?: (record: OutboundRecord) => Promise<void> | void
    /** runs after the first broadcast of a new row, before the caller sees the record */
    afterBroadcast?: (record: OutboundRecord) => Promise<void> | void
  }
}

/** What a caller holds that the outbox is built from (the worker's deps satisfy it). */
export interface OutboxSource {
  readonly sql: OutboxDeps['sql']
  readonly clients: OutboxDeps['clients']
  readonly registry: OutboxDeps['registry']
  readonly alerter?: OutboxDeps['alerter']
  readonly signerOf?: OutboxDeps['signerOf']
  /** tests only: shorter bounds for replacing stuck transactions and holding contradicted ones */
  readonly outboxTuning?: Pick<OutboxDeps, 'replaceAfterMs' | 'contradictionHold'>
}

/**
 * @example
 *   const rec = await sendOnce(outboxOf(deps), transfer)
 */
export function outboxOf(deps: OutboxSource, hooks?: OutboxDeps['hooks']): OutboxDeps {
  return {
    sql: deps.sql,
    clients: deps.clients,
    registry: deps.registry,
    ...(deps.alerter && { alerter: deps.alerter }),
    ...(deps.signerOf && { signerOf: deps.signerOf }),
    ...deps.outboxTuning,
    ...(hooks && { hooks }),
  }
}
