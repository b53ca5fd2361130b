/**
 * How a route hands the work it accepted to the worker (docs/architecture.md "Accepted work: one
 * job per 202"): after the request's transaction committed the row, its job is added to the
 * queue that serves it (@wh/jobs `rowJob`, `enqueueAfterCommit`), so the worker starts at once
 * instead of at its tick's next period. Redis refusing or not answering within ENQUEUE_TIMEOUT_MS
 * never fails the request: the row is written, a warning is logged, `wh_enqueue_failures_total`
 * counts it, and the tick that sweeps the row's table serves it.
 */
import { ENQUEUE_TIMEOUT_MS, enqueueAfterCommit, QUEUES, type RowJobName, rowJob } from '@wh/jobs'
import type { Queue } from 'bullmq'
import { Counter } from 'prom-client'

export interface JobsOptions {
  /** no job is added (the tick-only path: benchmarks compare it) */
  disabled?: boolean
  /** how long a request waits for Redis to take its job (default ENQUEUE_TIMEOUT_MS) */
  timeoutMs?: number
}

/** The request a job is enqueued for: its id travels in the job's data, its logger says when Redis refused. */
export interface Enqueuing {
  readonly id: string
  readonly log: { warn(obj: object, msg?: string): void }
}

export interface Jobs {
  /**
   * Adds `name`'s job for the row `rowId`, committed before this is called. Never throws; waits at
   * most the timeout. The same row's job already queued (a replayed request) makes it a no-op.
   */
  afterCommit(request: Enqueuing, name: RowJobName, rowId: string, userId: string): Promise<void>
  /** the counters GET /metrics shows (registered by plugins/metrics.ts) */
  readonly metrics: readonly Counter[]
}

/** The API's jobs on `queues` (the queues Bull Board shows, built in main.ts); none: no job is added. */
export function createJobs(queues: readonly Queue[] | undefined, opts: JobsOptions = {}): Jobs {
  const byName = new Map((queues ?? []).map((q) => [q.name, q]))
  const enqueued = new Counter({
    name: 'wh_jobs_enqueued_total',
    help: 'Jobs the API added after committing the row they are about, by job name',
    labelNames: ['job'],
    registers: [],
  })
  const failures = new Counter({
    name: 'wh_enqueue_failures_total',
    help: 'Jobs the API could not add (Redis refused or did not answer in time); the tick serves their rows',
    labelNames: ['job'],
    registers: [],
  })
  const enabled = !opts.disabled && byName.size > 0
  return {
    metrics: [enqueued, failures],
    async afterCommit(request, name, rowId, userId) {
      if (!enabled) return
      const job = rowJob(name, rowId, userId, request.id)
      const queue = byName.get(QUEUES[job.queue])
      const result = queue
        ? await enqueueAfterCommit(queue, job.name, job.data, job.opts, opts.timeoutMs ?? ENQUEUE_TIMEOUT_MS)
        : { ok: false as const, error: `queue ${QUEUES[job.queue]} is not configured` }
      if (result.ok) {
        enqueued.inc({ job: name })
        return
      }
      failures.inc({ job: name })
      request.log.warn(
        { job: name, jobId: job.opts.jobId, err: result.error },
        'job not enqueued: the row is committed and its tick serves it',
      )
    },
  }
}
