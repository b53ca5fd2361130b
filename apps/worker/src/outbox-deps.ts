/**
 * The outbox's dependencies from a processor's own: always built from the deps at hand (its
 * Postgres, clients and registry), never carried as a copy that could name another registry.
 */
import type { OutboxDeps } from '@wh/wallet'
import type { WorkerDeps } from './ticks'

/**
 * @example
 *   const rec = await sendOnce(outboxOf(deps), transfer)
 */
export function outboxOf(
  deps: Pick<WorkerDeps, 'sql' | 'clients' | 'registry' | 'alerter'> &
    Partial<Pick<WorkerDeps, 'signerOf' | 'outboxTuning'>>,
  hooks?: OutboxDeps['hooks'],
): OutboxDeps {
  return {
    sql: deps.sql,
    clients: deps.clients,
    registry: deps.registry,
    alerter: deps.alerter,
    ...(deps.signerOf && { signerOf: deps.signerOf }),
    ...deps.outboxTuning,
    ...(hooks && { hooks }),
  }
}
