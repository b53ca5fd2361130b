/**
 * The outbox's dependencies from a processor's own: always built from the deps at hand (its
 * Postgres, clients and registry), never carried as a copy that could name another registry.
 */
import type { OutboxDeps } from './outbox'

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
