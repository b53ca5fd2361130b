/**
 * Repeatable ticks: each a named job on a domain queue, registered as a BullMQ job
 * scheduler (upserted by id), so N replicas agree on one schedule and each period runs once.
 * Later issues add their ticks here (deposit scans, sweeps, funding, withdrawals, …).
 */
import type { QueueKey } from '@wh/jobs'
import type { Job } from 'bullmq'

export interface TickContext {
  readonly log: { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void }
}

export interface TickDefinition {
  /** job scheduler id and job name; stable across deployments */
  readonly name: string
  readonly queue: QueueKey
  readonly everyMs: number
  readonly process: (job: Job, ctx: TickContext) => Promise<unknown>
}
